/**
 * Flow control only where the disk cannot keep up: while a process's output log has more unwritten
 * output than its high mark, the host holds that environment's connection paused (the executor then
 * blocks its children on their pipes; nothing is lost), and releases it once the log is below its low
 * mark. Every pause is counted; pauses and resumes are logged, the many short ones of a lagging disk
 * summed into the next line said. Everywhere else the host reads its executors at
 * full speed: a slow reader reads the log at its own pace and never slows the executor.
 */
import type { Subscription } from 'rxjs';
import { endWith, ignoreElements, takeUntil } from 'rxjs/operators';
import type { ConnectionFlow, FlowHold } from '../rpc/connection-flow';
import type { OutputLog } from './log/output-log';

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

/**
 * Holds `flow()` (the environment's connection, once it exists) paused while `log` is under pressure.
 * Ends, releasing its hold, when the log takes no more appends. Returns the subscription that does it.
 *
 * Every pause is counted (`pauses.count`). A pause is said (with its resume) unless another was said
 * less than {@link PAUSE_LOG_QUIET_MS} before: a host whose disk lags behind a fast process pauses for a
 * few milliseconds many times a second, and a line for each would bury the rest of its log. The next
 * pause said then names how many went unsaid.
 */
export function pauseWhileBehind(log: OutputLog, flow: () => ConnectionFlow | undefined, say: (line: string) => void, pauses: DiskPauseLog): Subscription {
  let hold: FlowHold | undefined;
  let said = false;
  const release = (): void => {
    hold?.release();
    hold = undefined;
  };
  return log.pressure$.pipe(takeUntil(log.appended$.pipe(ignoreElements(), endWith(true)))).subscribe({
    next: (behind) => {
      if (behind && hold === undefined) {
        const connection = flow();
        if (connection === undefined) return;
        hold = connection.hold();
        pauses.count.pauses += 1;
        const now = pauses.now();
        said = pauses.lastSaidAt === undefined || now - pauses.lastSaidAt >= PAUSE_LOG_QUIET_MS;
        if (!said) {
          pauses.unsaid = (pauses.unsaid ?? 0) + 1;
          return;
        }
        const unsaid = pauses.unsaid ?? 0;
        pauses.lastSaidAt = now;
        pauses.unsaid = 0;
        say(`process ${log.processId}: pausing its executor, the output log is ${log.backlogBytes} bytes behind the disk${unsaid > 0 ? ` (${unsaid} shorter pause${unsaid === 1 ? '' : 's'} since the last said)` : ''}`);
      } else if (!behind && hold !== undefined) {
        release();
        if (said) say(`process ${log.processId}: the output log caught up, executor resumed`);
      }
    },
    complete: release,
  });
}
