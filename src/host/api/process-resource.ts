/** A listed process as the operator API shows it (`ProcessResource`), from its summary and what the host keeps beside. */
import type { ProcessSummary } from '../../exec/process-table';
import type { ProcessResource } from '../../wire/operator-api';
import { isoOf } from './process-waits';

/** What a resource shows besides the summary: its times and who started it. */
export interface ResourceExtras {
  /** When it started (ms since the epoch), if known. */
  readonly startedAt: number | null;
  /** When it exited, if it did. */
  readonly exitedAt: number | null;
  /** The name of the token that started it through the API. */
  readonly startedBy: string | null;
  /** Why its log store says it was lost (its stream failed because its executor lost it), if it says so. */
  readonly lostReason?: string | null;
}

/** The resource of a process of `environmentId`. */
export const toResource = (environmentId: string, summary: Omit<ProcessSummary, 'startedAt' | 'exitedAt'>, pipeStdin: boolean, times: ResourceExtras): ProcessResource => ({
  id: summary.processId,
  environmentId,
  argv: [...summary.argv],
  tty: summary.tty,
  pipeStdin,
  // A stream that failed because the executor lost the process is shown as its log says, and its readers see it: lost, and why.
  ...(summary.state === 'failed' && typeof times.lostReason === 'string'
    ? { state: 'lost' as const, error: { code: 'PROCESS_GONE', message: times.lostReason } }
    : { state: summary.state, error: summary.error === undefined ? null : { code: summary.error.code, message: summary.error.message } }),
  exitCode: summary.exitCode ?? null,
  startedAt: isoOf(times.startedAt),
  exitedAt: isoOf(times.exitedAt),
  startedBy: times.startedBy,
});
