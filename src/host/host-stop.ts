/**
 * A host's graceful stop, step by step (see `HostServer.close`): refuse what still comes, flush the
 * stores, end the event streams with the come-back event, close the log store (the last flush, before
 * the executors go), let the executors go, and stop the metrics endpoint last.
 */
import type { Server } from 'node:http';
import type { LogStore } from '../store/log-store';
import type { StateStore } from '../store/state-store';
import type { HostLogger } from './host-logger';
import type { HostCloseOptions, HostStopStep } from './host-options';
import { DEFAULT_COME_BACK_RETRY_MS } from './host-options';

/** What the rest of the host does when it stops (the operator API's routes and event streams). */
export interface HostStops {
  /** Refuse every request from now on (503). */
  readonly refuse: () => void;
  /** End every event stream with the come-back event; returns how many. */
  readonly endStreams: (retryMs: number) => number;
  /** Stop the metrics endpoint, the last step. */
  readonly closeMetrics: () => Promise<void>;
}

/** The parts of a host its stop goes through. */
export interface StoppingHost {
  /** The server executors and clients reach the host at. */
  readonly server: Server;
  /** The operator API's parts of the stop. */
  readonly stops: HostStops;
  /** The host's log store (flushed, then closed). */
  readonly logs: LogStore;
  /** The host's state store (flushed; its owner closes it after the host). */
  readonly state: StateStore;
  readonly log: HostLogger;
  /** The executors' side refuses from now on (503 to registrations and upgrades). */
  readonly refuse: () => void;
  /** Closes every environment (processes stay with their executors) and the executors' sockets. */
  readonly closeEnvironments: () => Promise<void>;
}

/** Stops the host gracefully, in the order of the module's doc. Resolves once stopped; never rejects. */
export async function stopHost(host: StoppingHost, options: HostCloseOptions = {}): Promise<void> {
  const step = async (name: HostStopStep): Promise<void> => {
    await options.onStep?.(name);
  };
  await step('refusing');
  host.refuse();
  host.stops.refuse();
  // Not listening any more; open connections stay (the event streams get their last event below), idle ones go.
  const closed = new Promise<void>((resolve) => host.server.close(() => resolve()));
  host.server.closeIdleConnections();
  await step('flushing output logs');
  await Promise.all([host.logs.flush(), host.state.flush()]);
  await step('ending event streams');
  const ended = host.stops.endStreams(options.retryMs ?? DEFAULT_COME_BACK_RETRY_MS);
  if (ended > 0) host.log.info({ streams: ended }, `stopping: ${ended} event stream(s) ended with the come-back event`);
  await step('closing output logs');
  // Before the executors go (the last flush): their processes' streams fail when the sockets close, and
  // that must not reach the logs; what an executor sends after this, the next run reads from it again (from the log's last seq).
  await host.logs.close();
  await step('closing executor sockets');
  await host.closeEnvironments();
  host.server.closeAllConnections();
  await closed;
  await host.stops.closeMetrics();
}
