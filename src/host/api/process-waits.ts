/**
 * `POST …/processes/{processId}/wait` (Docker's `POST /containers/{id}/wait`): answers once the process
 * has exited, with `{ exitCode, exitedAt }`. Every wait settles: when the process exits (or fails, or
 * leaves its list), when the host stops (503 with `Retry-After`: the client comes back), and when the
 * client goes away (nothing is left behind).
 */
import type { ServerResponse } from 'node:http';
import type { Observable, SchedulerLike } from 'rxjs';
import { asyncScheduler, firstValueFrom, Subscription } from 'rxjs';
import type { ExecProcess } from '../../exec/exec-process';
import type { ProcessResource, WaitResult } from '../../wire/operator-api';
import { ApiProblem, sendProblem } from './problem';
import { sendApiJson } from './responses';

/** One pending wait: how to answer it when the host stops. */
interface PendingWait {
  stop(problem: ApiProblem): void;
}

/** The waits the API holds open; the host's stop settles each with 503. */
export class ProcessWaits {
  private readonly pending = new Set<PendingWait>();
  private closedWith: ApiProblem | undefined;

  /** `scheduler`: the clock of `exitedAt` when no output log holds it (the host's). */
  constructor(private readonly scheduler: SchedulerLike = asyncScheduler) {}

  /** How many waits are open (bookkeeping: 0 once every client went away or was answered). */
  get size(): number {
    return this.pending.size;
  }

  /**
   * Answers `res` once `process` has exited, with its exit code and when: `storedExitedAt()` (the output
   * log's time, epoch ms) when known, else the time this wait saw the exit happen, else null (it had
   * exited before the wait, and the host keeps no log); with the process's failure as a problem once it
   * failed, 404 once it left the list without an exit code. Gives up quietly when `res` closes (nothing
   * is kept); answers 503 with `Retry-After` when {@link close} comes first.
   */
  waitFor(res: ServerResponse, hostInstance: string, process: ExecProcess, storedExitedAt: () => Promise<number | null | undefined>): void {
    if (this.closedWith !== undefined) return sendProblem(res, this.closedWith, hostInstance);
    // Unsubscribed by finish(); what is added after (a state$ that answered at once) goes at once.
    const subscription = new Subscription();
    let sawRunning = false;
    const wait: PendingWait = {
      stop: (problem) => {
        finish();
        sendProblem(res, problem, hostInstance);
      },
    };
    const finish = (): void => {
      this.pending.delete(wait);
      res.off('close', finish);
      subscription.unsubscribe();
    };
    const answer = (state: string): void => {
      if (state === 'running') sawRunning = true;
      const code = process.exitCode;
      if (code !== undefined) {
        finish();
        const seen = sawRunning ? this.scheduler.now() : null;
        const send = (stored: number | null | undefined): void => sendApiJson(res, hostInstance, 200, { exitCode: code, exitedAt: isoOf(stored ?? seen) } satisfies WaitResult);
        storedExitedAt().then(send, () => send(undefined));
        return;
      }
      if (process.state === 'failed' || process.state === 'closed') wait.stop(failedProblem(process));
    };
    this.pending.add(wait);
    res.on('close', finish);
    subscription.add(
      process.state$.subscribe({
        next: answer,
        complete: () => {
          if (this.pending.has(wait)) wait.stop(new ApiProblem(404, 'PROCESS_NOT_FOUND', `the process ${process.processId} left its list before it exited`));
        },
      }),
    );
  }

  /** Whether {@link close} was called (the host is stopping). */
  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  /** Answers `res` 503 as {@link close} does; false (nothing sent) while the host is not stopping. */
  refuseIfClosed(res: ServerResponse, hostInstance: string): boolean {
    if (this.closedWith === undefined) return false;
    sendProblem(res, this.closedWith, hostInstance);
    return true;
  }

  /**
   * The host stops: every open wait is answered 503 `CLOSED` with `Retry-After` (`retryMs`, in whole
   * seconds, at least 1), and so is every wait asked for from now on.
   */
  close(retryMs = 1000): void {
    this.closedWith = new ApiProblem(503, 'CLOSED', 'the host is stopping: wait again once it is back', { 'retry-after': String(Math.max(1, Math.ceil(retryMs / 1000))) });
    for (const wait of [...this.pending]) wait.stop(this.closedWith);
  }
}

/** Epoch ms as ISO-8601; null stays null. */
export const isoOf = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

const failedProblem = (process: ExecProcess): ApiProblem => {
  const failure = process.failure;
  return new ApiProblem(409, failure?.code ?? 'PROCESS_FAILED', `the process ${process.processId} failed before it exited${failure === undefined ? '' : `: ${failure.message}`}`);
};

/**
 * The answer for a process only the host's output logs hold (of before a restart), once its environment's
 * take-back settled: its exit when it exited, else 409 with the stored error's code (`PROCESS_GONE` for a
 * lost one or one whose end is unknown).
 */
export function storedWaitAnswer(stored: ProcessResource, exitedAt: string | null): WaitResult {
  if (stored.exitCode !== null) return { exitCode: stored.exitCode, exitedAt };
  if (stored.state === 'failed') throw new ApiProblem(409, 'HOST_ERROR', `the process ${stored.id} failed on the host's side before a restart; how it ended is unknown`);
  if (stored.state === 'lost') {
    const why = stored.error?.message ?? 'no reason given';
    throw new ApiProblem(409, 'PROCESS_GONE', `the process ${stored.id} was running when the host stopped and could not be taken back: ${why}`);
  }
  throw new ApiProblem(409, 'PROCESS_GONE', `the process ${stored.id} was running when the host stopped; how it ended is unknown`);
}

/** Resolves once `settled$` emitted (or completed): the take-back of an environment after a restart. */
export const settledOnce = (settled$: Observable<void>): Promise<void> => firstValueFrom(settled$, { defaultValue: undefined });
