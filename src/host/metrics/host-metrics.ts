/**
 * A host's Prometheus metrics (prom-client): one `Registry` per host, never prom-client's global one (a
 * process may run several hosts: the specs, `exec-rx run`). Counters are moved by the parts of the host
 * that see things happen (registrations, upgrades, event streams, process output); gauges read the
 * host's facts when scraped. Every label value comes from a small fixed set: never a process or
 * environment id, an argv or a token.
 */
import { performance } from 'node:perf_hooks';
import type { CounterConfiguration } from 'prom-client';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { HistoryFactory } from '../../exec/output-history';
import type { LogStoreFigures } from '../../store/log-store';
import type { OutputStream } from '../../wire/process-event';
import type { HostFacts } from '../host-monitor';
import type { HostEvent, HostedState } from '../hosted-environment';
import type { TokenSetFigures } from './host-gauges';
import { registerGauges, registerTokenGauges } from './host-gauges';
import type { ClusterFigures } from '../cluster/cluster-options';
import type { ForwardingFigures } from '../api/forwarding';
import type { PreviewObserver } from '../api/preview/preview-traffic';
import { scrapedCounter, scrapedCounters } from './scraped-counters';
import { observed } from './observed-history';

/** How a registration or a signed upgrade was answered: accepted, or the status it was refused with. */
export type HandshakeOutcome = 'accepted' | 'replacement' | '400' | '401' | '404' | '405' | '409' | '413' | '429' | '500' | '503';

/** Why an event stream ended: its last event was sent, its reader stalled or fell past the buffer bound, the client left, or the host stopped. */
export type StreamEndReason = 'completed' | 'stalled' | 'overflow' | 'client' | 'restart' | 'closed' | 'revoked';

/** What the operator API's event streams report (see `SseHub`). */
export interface StreamObserver {
  /** A stream opened. */
  opened(): void;
  /** `bytes` were written to a stream (events, pings, the come-back event). */
  sent(bytes: number): void;
  /** A stream ended, once, for `reason`. */
  ended(reason: StreamEndReason): void;
}

/** The prefix of every metric the host defines (Node's default metrics keep their own names). */
const PREFIX = 'exec_rx_host_';

/** Seconds buckets of a process's run: from 10 ms to a day. */
const PROCESS_BUCKETS = [0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14_400, 86_400];

/** Seconds buckets of one JSON-RPC call: from 1 ms to the 30 s timeout. */
const CALL_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Node's default metrics, collected once per process into a registry of their own (see {@link HostMetrics.text}). */
let processMetrics: Registry | undefined;

/**
 * Node's default process metrics (CPU, memory, event loop lag, GC, handles), in one registry per
 * process: prom-client 15 gives no way to stop what `collectDefaultMetrics` starts (an event-loop-delay
 * histogram and a GC observer; neither holds the process open), so collecting them once per host would
 * leave one of each behind for every host a process ever ran. They describe the process, so every host
 * of it reports the same figures.
 */
function defaultMetrics(): Registry {
  if (processMetrics === undefined) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

/** The host's metrics. Built by the host with what its gauges read; lives as long as it. */
export class HostMetrics {
  /** This host's own registry. */
  readonly registry = new Registry();
  /** Registrations by how they were answered. */
  readonly registrations: Counter<'outcome'>;
  /** Signed upgrades by how they were answered (`replacement`: an accepted socket for a live environment). */
  readonly upgrades: Counter<'outcome'>;
  /** Output bytes received from executors, by stream. */
  readonly outputBytes: Counter<'stream'>;
  /** Output events received from executors, by stream. */
  readonly outputEvents: Counter<'stream'>;
  /** JSON-RPC calls to executors by method and outcome (`ok` or the library's error code). */
  readonly rpcCalls: Counter<'method' | 'outcome'>;
  /** JSON-RPC call latency by method. */
  readonly rpcSeconds: Histogram<'method'>;
  private readonly reconnects: Counter;
  private readonly disconnects: Counter<'reason'>;
  private readonly resumes: Counter;
  private readonly resumeFailures: Counter<'reason'>;
  private readonly processSeconds: Histogram;
  private readonly syncSeconds: Histogram;
  private readonly streamsOpened: Counter;
  private readonly streamBytes: Counter;
  private readonly streamsEnded: Counter<'reason'>;
  /**
   * What the hot path counted since the last scrape: added to the counters when they are read. A
   * labelled `inc` per output event and per frame written, with its label lookup, was a few percent of
   * the host's CPU serving a fast process.
   */
  private readonly uncounted: { output: Partial<Record<OutputStream, { bytes: number; events: number }>>; streamBytes: number } = { output: {}, streamBytes: 0 };
  /** The last state of each live environment seen on `events$` (bounded by the host's environments). */
  private readonly states = new Map<string, HostedState>();

  /** `facts`: what the gauges read when scraped (the host monitor's); `outputLog`: the log store's figures, when it keeps files. */
  constructor(facts: () => HostFacts, outputLog?: () => LogStoreFigures) {
    const registers = [this.registry];
    const counter = <L extends string>(config: CounterConfiguration<L>): Counter<L> => new Counter<L>({ ...config, name: PREFIX + config.name, registers });
    const uncounted = (): void => this.addUncounted();
    this.registrations = counter({ name: 'registrations_total', help: 'Executor registrations, by outcome (accepted, or the HTTP status refused with).', labelNames: ['outcome'] });
    this.upgrades = counter({
      name: 'upgrades_total',
      help: 'Signed WebSocket upgrades, by outcome (accepted, replacement, or the HTTP status refused with).',
      labelNames: ['outcome'],
    });
    this.reconnects = counter({ name: 'reconnects_total', help: 'Replacement sockets accepted for a live environment (an executor re-dialled).' });
    this.disconnects = counter({ name: 'disconnects_total', help: "Environment connections lost (recovery begins), by the library's error code.", labelNames: ['reason'] });
    this.resumes = counter({ name: 'resumes_total', help: 'Lost connections recovered: the session resumed on a new socket.' });
    this.resumeFailures = counter({
      name: 'resume_failures_total',
      help: "Lost connections not recovered (the environment failed), by the library's error code.",
      labelNames: ['reason'],
    });
    this.outputBytes = counter({ name: 'output_bytes_total', help: 'Process output bytes received from executors, by stream.', labelNames: ['stream'], collect: uncounted });
    this.outputEvents = counter({ name: 'output_events_total', help: 'Process output events received from executors, by stream.', labelNames: ['stream'], collect: uncounted });
    this.rpcCalls = counter({
      name: 'rpc_calls_total',
      help: "JSON-RPC calls to executors, by method and outcome (ok, or the library's error code).",
      labelNames: ['method', 'outcome'],
    });
    this.rpcSeconds = new Histogram({
      name: `${PREFIX}rpc_call_duration_seconds`,
      help: 'JSON-RPC call latency (sent to settled), by method.',
      labelNames: ['method'],
      buckets: CALL_BUCKETS,
      registers,
    });
    const processHelp = 'From a process start (or its take-back after a restart) to its exit.';
    this.processSeconds = new Histogram({ name: `${PREFIX}process_duration_seconds`, help: processHelp, buckets: PROCESS_BUCKETS, registers });
    const syncHelp = "An output log segment's fdatasync (with a data dir).";
    this.syncSeconds = new Histogram({ name: `${PREFIX}output_log_fsync_duration_seconds`, help: syncHelp, buckets: CALL_BUCKETS, registers });
    this.streamsOpened = counter({ name: 'event_streams_opened_total', help: 'Operator API event streams (SSE) opened.' });
    this.streamBytes = counter({ name: 'event_stream_bytes_total', help: 'Bytes written to operator API event streams (SSE).', collect: uncounted });
    this.streamsEnded = counter({
      name: 'event_streams_ended_total',
      help: 'Operator API event streams (SSE) ended, by reason (completed, stalled, overflow, client, restart, closed).',
      labelNames: ['reason'],
    });
    registerGauges(this.registry, PREFIX, facts, outputLog);
  }

  /** The exposition's content type (Prometheus text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition: this host's metrics and the process's default ones. */
  text(): Promise<string> {
    return Registry.merge([this.registry, defaultMetrics()]).metrics();
  }

  /** Counts what `event` says of reconnects: a loss, a recovery, a failed recovery. */
  readonly onHostEvent = (event: HostEvent): void => {
    if (event.type !== 'state') return;
    const before = this.states.get(event.environmentId);
    const reason = event.errorCode ?? 'unknown';
    if (event.state === 'disconnected' && before !== 'disconnected') this.disconnects.inc({ reason });
    if (event.state === 'connected' && before === 'disconnected') this.resumes.inc();
    if (event.state === 'failed' && before === 'disconnected') this.resumeFailures.inc({ reason });
    // Only live environments are kept: a failed or closed one starts afresh (or is forgotten).
    if (event.state === 'closed' || event.state === 'failed') this.states.delete(event.environmentId);
    else this.states.set(event.environmentId, event.state);
  };

  /** An output log's fdatasync took `ms`. */
  readonly onSync = (ms: number): void => {
    this.syncSeconds.observe(ms / 1000);
  };

  /**
   * With replicas: the cluster's counts, read when scraped: `exec_rx_host_stale_writes_total{store}` (writes the
   * shared stores refused as stale: a fenced replica's), `exec_rx_host_fenced_total`, `exec_rx_host_store_rewrites_total`.
   */
  observeCluster(read: () => ClusterFigures): void {
    const staleHelp = 'Writes the shared stores refused because their epoch was stale (this replica was fenced), by store.';
    scrapedCounters(this.registry, `${PREFIX}stale_writes_total`, staleHelp, 'store', () => {
      const figures = read();
      return { state: figures.staleStateWrites, log: figures.staleLogWrites };
    });
    scrapedCounter(this.registry, `${PREFIX}fenced_total`, 'Environments this replica let go of because another replica owns them now.', () => read().fenced);
    const rewritesHelp = 'Times the shared store was found to have lost its data and this replica rewrote what it owns.';
    scrapedCounter(this.registry, `${PREFIX}store_rewrites_total`, rewritesHelp, () => read().rewrites);
  }

  /**
   * With replicas that forward: `exec_rx_host_forwarded_calls_total{outcome}` (`answered` by the owner,
   * `owner_unreachable`: 503, `lost`: 502) and `exec_rx_host_forwards_refused_total` (signed forwards this
   * replica refused: a key another replica signs with that this one does not accept, mid-rotation), read when scraped.
   */
  observeForwarding(read: () => ForwardingFigures): void {
    const callsHelp = 'Owner-only calls this replica forwarded to the owner, by outcome (answered, owner_unreachable, lost).';
    scrapedCounters(this.registry, `${PREFIX}forwarded_calls_total`, callsHelp, 'outcome', () => {
      const figures = read();
      return { answered: figures.answered, owner_unreachable: figures.unreachable, lost: figures.lost };
    });
    const refusedHelp = 'Signed forwards from other replicas this replica refused (401 FORWARD_REFUSED).';
    scrapedCounter(this.registry, `${PREFIX}forwards_refused_total`, refusedHelp, () => read().refused);
  }

  /**
   * With an operator API: its tokens, read when scraped: `exec_rx_host_operator_tokens_info{digest}` 1 for the
   * set accepted now (only that digest: a reload replaces it), and `exec_rx_host_operator_tokens`, how many.
   */
  observeOperatorTokens(read: () => TokenSetFigures): void {
    registerTokenGauges(this.registry, PREFIX, read);
  }

  /** Counts a registration's answer. */
  registration(outcome: HandshakeOutcome): void {
    this.registrations.inc({ outcome });
  }

  /** Counts a signed upgrade's answer (a `replacement` is a reconnect too). */
  upgrade(outcome: HandshakeOutcome): void {
    this.upgrades.inc({ outcome });
    if (outcome === 'replacement') this.reconnects.inc();
  }

  /** Every preview request and fetch through an environment, by kind, status class and outcome (`./../api/preview/preview-traffic`). */
  private readonly httpRequests = new Counter({
    name: `${PREFIX}http_requests_total`,
    help:
      'Requests through environments (kind: preview, fetch) by the status class sent (2xx … 5xx, or none) ' +
      'and how they ended (answered, refused, cut, client, overflow, revoked, closed).',
    labelNames: ['kind', 'status', 'outcome'] as const,
    registers: [this.registry],
  });

  /** What previews and fetches report, counted. */
  readonly previews: PreviewObserver = {
    ended: (kind, status, outcome) => this.httpRequests.inc({ kind, status: status === 0 ? 'none' : `${Math.floor(status / 100)}xx`, outcome }),
  };

  /** What the event streams report, counted. */
  readonly streams: StreamObserver = {
    opened: () => this.streamsOpened.inc(),
    sent: (bytes) => {
      this.uncounted.streamBytes += bytes;
    },
    ended: (reason) => this.streamsEnded.inc({ reason }),
  };

  /** A JSON-RPC call settled after `ms`: `outcome` is `ok` or the library's error code. */
  readonly onCall = (method: string, outcome: string, ms: number): void => {
    this.rpcCalls.inc({ method, outcome });
    this.rpcSeconds.observe({ method }, ms / 1000);
  };

  /**
   * `factory`, its histories counting what is appended: output bytes and events by stream, and for a
   * listed process (not a start's helpers) the time from its history's making to its exit.
   */
  observeHistories(factory: HistoryFactory): HistoryFactory {
    return (processId, launch) => {
      const history = factory(processId, launch);
      const startedAt = launch === undefined ? undefined : performance.now();
      return observed(history, (event) => {
        if (event.type === 'output') {
          const counts = (this.uncounted.output[event.stream] ??= { bytes: 0, events: 0 });
          counts.bytes += event.chunk.byteLength;
          counts.events += 1;
        } else if (event.type === 'exited' && startedAt !== undefined) {
          this.processSeconds.observe((performance.now() - startedAt) / 1000);
        }
      });
    };
  }

  /** Adds what the hot path counted since the last scrape to the counters. */
  private addUncounted(): void {
    const { output, streamBytes } = this.uncounted;
    for (const [stream, counts] of Object.entries(output)) {
      if (counts.events === 0) continue;
      this.outputBytes.inc({ stream }, counts.bytes);
      this.outputEvents.inc({ stream }, counts.events);
      counts.bytes = counts.events = 0;
    }
    if (streamBytes > 0) this.streamBytes.inc(streamBytes);
    this.uncounted.streamBytes = 0;
  }
}
