/**
 * One surface for what an operator watches on a host: the figures of the moment ({@link HostMonitor.facts},
 * read when asked) and what happens as it happens ({@link HostMonitor.events$}). The host's log, a metrics
 * exporter and a dashboard all read these, so they never disagree.
 */
import type { Observable, SchedulerLike } from 'rxjs';
import { asyncScheduler, timer } from 'rxjs';
import { endWith, ignoreElements, map, startWith, takeUntil } from 'rxjs/operators';
import type { ProcessState } from '../exec/process-status';
import type { Diagnostic } from '../rpc/diagnostics';
import type { HostedState, HostEvent } from './hosted-environment';
import type { HostedEnvironments } from './hosted-environments';

/** What a host holds right now, summed over its environments' current generations. */
export interface HostFacts {
  /** Environments by state. */
  readonly environments: Readonly<Record<HostedState, number>>;
  /** Listed processes by state. */
  readonly processes: Readonly<Record<ProcessState, number>>;
  /** Calls sent to executors and not answered yet. */
  readonly pendingCalls: number;
  /** Processes whose notifications a connection routes. */
  readonly processRoutes: number;
  /** Events the processes' histories hold for replay. */
  readonly retainedEvents: number;
  /** Output bytes the processes' histories hold for replay. */
  readonly retainedBytes: number;
  /** Live subscribers of those histories (event streams and library subscribers). */
  readonly historySubscribers: number;
  /** Open event streams of the operator API (0 without it). */
  readonly eventStreams: number;
  /** Times an executor was paused because a process's output log on disk could not keep up (ever, not now). */
  readonly diskPauses: number;
  /**
   * Processes a take-back left neither adopted nor lost (ever): a broken invariant, 0 unless there is a
   * bug (each is logged, and marked `lost` so that its readers get an end).
   */
  readonly unaccountedTakeBacks: number;
}

/** Reads a host's facts and events. Built by the host; lives as long as it (its streams complete on close). */
export class HostMonitor {
  /**
   * Each environment's diagnostics and state changes as they happen (hot: a subscriber hears what comes
   * after it subscribed). Completes when the host closes; never errors.
   */
  readonly events$: Observable<HostEvent>;

  /** @internal Built by the host with its environments and a count of the operator API's open streams. */
  constructor(
    private readonly environments: HostedEnvironments,
    private readonly eventStreams: () => number,
    private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {
    this.events$ = environments.events$;
  }

  /** The figures of the moment: a new object on each call (it walks every listed process). */
  facts(): HostFacts {
    const environments: Record<HostedState, number> = { starting: 0, connecting: 0, connected: 0, disconnected: 0, failed: 0, closed: 0 };
    const processes: Record<ProcessState, number> = { running: 0, exited: 0, closed: 0, failed: 0 };
    let pendingCalls = 0;
    let processRoutes = 0;
    let retainedEvents = 0;
    let retainedBytes = 0;
    let historySubscribers = 0;
    for (const hosted of this.environments.all()) {
      environments[hosted.state] += 1;
      const facts = hosted.environment?.facts();
      if (facts === undefined) continue;
      for (const state of Object.keys(processes) as ProcessState[]) processes[state] += facts.processes[state];
      pendingCalls += facts.pendingCalls;
      processRoutes += facts.processRoutes;
      retainedEvents += facts.retainedEvents;
      retainedBytes += facts.retainedBytes;
      historySubscribers += facts.historySubscribers;
    }
    const diskPauses = this.environments.diskPauses.pauses;
    const unaccountedTakeBacks = this.environments.unaccountedTakeBacks;
    const streams = this.eventStreams();
    return { environments, processes, pendingCalls, processRoutes, retainedEvents, retainedBytes, historySubscribers, eventStreams: streams, diskPauses, unaccountedTakeBacks };
  }

  /**
   * {@link facts} at once (synchronously, on subscribe) and then every `periodMs` of the host's
   * scheduler, for a view that refreshes.
   * Completes when the host closes; never errors; unsubscribing stops the timer.
   */
  facts$(periodMs: number): Observable<HostFacts> {
    return timer(periodMs, periodMs, this.scheduler).pipe(
      startWith(0),
      map(() => this.facts()),
      takeUntil(this.environments.environments$.pipe(ignoreElements(), endWith(true))),
    );
  }
}

/**
 * One line for the host's log about a diagnostic: its kind and what names it (a method, an id, a code),
 * never a frame's content, which may carry process output or secrets.
 */
export function describeDiagnostic(diagnostic: Diagnostic): string {
  switch (diagnostic.type) {
    case 'unparsableFrame':
      return 'an unparsable frame from the executor (ignored)';
    case 'unattributedError':
      return `the executor could not parse a message we sent (${diagnostic.error.rpcCode})`;
    case 'unknownResponse':
      return `a reply to id ${JSON.stringify(diagnostic.id)}, which no call awaits (ignored)`;
    case 'malformedNotification':
      return `a ${diagnostic.method} notification that failed its codec (ignored)`;
    case 'unknownNotification':
      return `an unknown notification ${JSON.stringify(diagnostic.method.slice(0, 64))} (ignored)`;
    case 'serverRequestFailed':
      return `the executor's ${JSON.stringify(diagnostic.method.slice(0, 64))} request could not be answered well (${diagnostic.error.code})`;
  }
}
