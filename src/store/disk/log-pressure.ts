/**
 * A writing log's backpressure as the store reports it (`LogStore.pressure$`): each change of whether the
 * log's unwritten backlog is past its high mark, with the backlog then; and when the log ends while
 * behind, one last `behind: false`, so the host never holds an executor paused for a log that is gone.
 */
import type { Subscription } from 'rxjs';
import { endWith, ignoreElements, takeUntil } from 'rxjs/operators';
import type { LogPressure } from '../log-store';
import type { ProcessKey } from '../process-meta';
import type { OutputLog } from './log/output-log';

/** Tells `emit` of each change of `log`'s pressure until it takes no more appends (see the module's doc); the watch ends then. */
export function watchPressure(log: OutputLog, key: ProcessKey, emit: (pressure: LogPressure) => void): Subscription {
  let behind = false;
  return log.pressure$.pipe(takeUntil(log.appended$.pipe(ignoreElements(), endWith(true)))).subscribe({
    next: (now) => {
      if (now === behind) return;
      behind = now;
      emit({ key, behind, backlogBytes: log.backlogBytes });
    },
    complete: () => {
      if (!behind) return;
      behind = false;
      emit({ key, behind, backlogBytes: log.backlogBytes });
    },
  });
}
