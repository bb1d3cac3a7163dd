/**
 * When the processes the operator API started started and exited, as this host saw it (on its clock):
 * the resource and `…/wait` read it while the host tracks a process, the log store's meta otherwise.
 */
import type { SchedulerLike } from 'rxjs';
import type { ExecProcess } from '../../exec/exec-process';

/** When a process the API started started and exited, ms since the epoch (on the host's clock). */
export interface ProcessTimes {
  readonly startedAt: number;
  /** When the host saw its exit; null while it runs. */
  readonly exitedAt: number | null;
}

/** The times of the processes the API started, by id, until each is forgotten. */
export class ProcessTimesBook {
  private readonly times = new Map<string, ProcessTimes>();

  constructor(private readonly scheduler: SchedulerLike) {}

  /** The times of `processId`, while it is noted. */
  get(processId: string): ProcessTimes | undefined {
    return this.times.get(processId);
  }

  /** Notes when `process` started (now) and, once it has an exit code, when it exited. */
  note(process: ExecProcess): void {
    const now = (): number => this.scheduler.now();
    const { processId } = process;
    this.times.set(processId, { startedAt: now(), exitedAt: null });
    const subscription = process.state$.subscribe(() => {
      const times = this.times.get(processId);
      if (times === undefined || times.exitedAt !== null || process.exitCode === undefined) return;
      this.times.set(processId, { ...times, exitedAt: now() });
    });
    if (process.exitCode !== undefined) subscription.unsubscribe();
  }

  /** Forgets `processId`'s times (it left its environment's list). */
  forget(processId: string): void {
    this.times.delete(processId);
  }
}
