/**
 * Flow control only where the disk cannot keep up: while a process's output log has more unwritten
 * output than its high mark, the host holds that environment's connection paused (the executor then
 * blocks its children on their pipes; nothing is lost), and releases it once the log is below its low
 * mark. Every pause and resume is logged and counted. Everywhere else the host reads its executors at
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

/**
 * Holds `flow()` (the environment's connection, once it exists) paused while `log` is under pressure.
 * Ends, releasing its hold, when the log takes no more appends. Returns the subscription that does it.
 */
export function pauseWhileBehind(log: OutputLog, flow: () => ConnectionFlow | undefined, say: (line: string) => void, count: DiskPauseCount): Subscription {
  let hold: FlowHold | undefined;
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
        count.pauses += 1;
        say(`process ${log.processId}: pausing its executor, the output log is ${log.backlogBytes} bytes behind the disk`);
      } else if (!behind && hold !== undefined) {
        release();
        say(`process ${log.processId}: the output log caught up, executor resumed`);
      }
    },
    complete: release,
  });
}
