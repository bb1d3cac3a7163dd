/**
 * What a follower of a process's output log does once it read all of a log that takes no more appends
 * without `closed` (see log-event-stream's `afterEnd`). After a host restart, a process found running
 * in its log is `unknown` until its executor comes back: while the host expects it back
 * (`HostedEnvironments.awaitingTakeBack`), the follower waits; once the process is taken back it reads on
 * in the log that takes its appends again (the store's reader now, not the sealed one it read), once it is found
 * `lost` (or the wait ran out) it ends with `failed` PROCESS_GONE, saying why. A process whose stream failed
 * on the host's side (`failed` in the store) ends with `failed` PROCESS_FAILED: a reader never waits for more.
 */
import type { Observable } from 'rxjs';
import { defer, from, of, switchMap } from 'rxjs';
import type { LogStore, PacedLogReader } from '../../store/log-store';
import type { ProcessKey } from '../../store/process-meta';
import type { HostedEnvironments } from '../hosted-environments';
import type { LogContinuation } from './log-event-stream';

/** The end of the log of a process whose end stayed unknown: nothing more will come. */
export const UNKNOWN_END = 'its output log ends here: it was running when the host stopped, how it ended is unknown';

const END: LogContinuation = { type: 'end' };

/** What a follower needs of the host's environments: when a restart's take-back of one has settled. */
export type TakeBackWatch = Pick<HostedEnvironments, 'takeBackSettled'>;

/**
 * The `afterEnd` of a follower of process `key`: waits while the process is `unknown` and its
 * environment's executor is awaited (the wait bounded by `environments`), then looks again (see the
 * module's doc). Emits once and completes; never errors (a log that cannot be opened ends the stream).
 */
export function afterLogEnd(environments: TakeBackWatch, store: Pick<LogStore, 'meta' | 'openReader'>, key: ProcessKey): (log: PacedLogReader) => Observable<LogContinuation> {
  return (log) =>
    defer(() => from(store.meta(key))).pipe(
      switchMap((meta) => (meta?.state === 'unknown' ? environments.takeBackSettled(key.environmentId) : of(undefined))),
      switchMap(() => from(continuationOf(store, key, log))),
    );
}

/** What the store says of the process now, for a follower at the end of `log`. */
async function continuationOf(store: Pick<LogStore, 'meta' | 'openReader'>, key: ProcessKey, log: PacedLogReader): Promise<LogContinuation> {
  const meta = await store.meta(key);
  if (meta === undefined) return END;
  if (meta.state === 'unknown') return { type: 'gone', message: UNKNOWN_END };
  if (meta.state === 'lost') return { type: 'gone', message: `it was running when the host stopped and could not be taken back: ${meta.lostReason ?? 'no reason given'}` };
  // Its stream failed on the host's side: the log ends there, and says so (a reader never waits for more).
  if (meta.state === 'failed') return { type: 'gone', code: 'PROCESS_FAILED', message: "the process's stream failed on the host's side: its log ends here" };
  const current = await store.openReader(key).catch(() => undefined);
  return current?.pace === 'own' && current !== log ? { type: 'log', log: current } : END;
}
