/**
 * Flow control only where the log store cannot keep up: while a process's log has more unwritten output
 * than its high mark (the store's `pressure$`), the host holds that environment's connection paused (the
 * executor then blocks its children on their pipes; nothing is lost), and releases it once the log is
 * below its low mark or ends. Every pause is counted; pauses and resumes are logged, the many short ones
 * of a lagging disk summed into the next line said. Everywhere else the host reads its executors at full
 * speed: a slow reader reads the log at its own pace and never slows the executor.
 */
import type { Observable, Subscription } from 'rxjs';
import type { ConnectionFlow, FlowHold } from '../rpc/connection-flow';
import type { LogPressure } from '../store/log-store';
import { keyOf } from '../store/process-meta';

/** What the host counts of these pauses (see `HostFacts.diskPauses`). */
export interface DiskPauseCount {
  /** Times an executor was paused because a log could not keep up. */
  pauses: number;
}

/** After a logged pause, further pauses within this long are counted, and said in the next line (the next pause after it). */
export const PAUSE_LOG_QUIET_MS = 10_000;

/** Clock and counting shared by the pause watchers of one host. */
export interface DiskPauseLog {
  /** The count every pause adds to. */
  readonly count: DiskPauseCount;
  /** The host's clock (ms). */
  readonly now: () => number;
  /** When a pause was last said; pauses not said since. */
  lastSaidAt?: number;
  unsaid?: number;
}

/** One process's hold on its environment's connection, and whether its pause was said. */
interface Held {
  readonly hold: FlowHold;
  readonly said: boolean;
}

/**
 * Holds an environment's connection (`flow(environmentId)`, once it exists) paused while one of its
 * processes' logs is behind, per `pressure$`. Returns the subscription; unsubscribing releases every hold.
 *
 * Every pause is counted (`pauses.count`). A pause is said (with its resume) unless another was said less
 * than {@link PAUSE_LOG_QUIET_MS} before: a host whose disk lags behind a fast process pauses for a few
 * milliseconds many times a second, and a line for each would bury the rest of its log. The next pause
 * said then names how many went unsaid.
 */
export function holdWhileBehind(
  pressure$: Observable<LogPressure>,
  flow: (environmentId: string) => ConnectionFlow | undefined,
  say: (environmentId: string, line: string) => void,
  pauses: DiskPauseLog,
): Subscription {
  const held = new Map<string, Held>();
  const subscription = pressure$.subscribe(({ key, behind, backlogBytes }) => {
    const id = keyOf(key);
    const current = held.get(id);
    if (behind && current === undefined) {
      const connection = flow(key.environmentId);
      if (connection === undefined) return;
      pauses.count.pauses += 1;
      const now = pauses.now();
      const said = pauses.lastSaidAt === undefined || now - pauses.lastSaidAt >= PAUSE_LOG_QUIET_MS;
      held.set(id, { hold: connection.hold(), said });
      if (!said) {
        pauses.unsaid = (pauses.unsaid ?? 0) + 1;
        return;
      }
      const unsaid = pauses.unsaid ?? 0;
      pauses.lastSaidAt = now;
      pauses.unsaid = 0;
      const since = unsaid > 0 ? ` (${unsaid} shorter pause${unsaid === 1 ? '' : 's'} since the last said)` : '';
      say(key.environmentId, `process ${key.processId}: pausing its executor, the output log is ${backlogBytes} bytes behind the disk${since}`);
    } else if (!behind && current !== undefined) {
      held.delete(id);
      current.hold.release();
      if (current.said) say(key.environmentId, `process ${key.processId}: the output log caught up, executor resumed`);
    }
  });
  subscription.add(() => {
    for (const { hold } of held.values()) hold.release();
    held.clear();
  });
  return subscription;
}
