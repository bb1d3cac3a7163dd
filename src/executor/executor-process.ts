import type { ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import type { SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import { LineRing } from './line-ring';

const PIPE_CLOSE_GRACE_MS = 500;

/** How the executor process ended. SIGTERM ends it with `{ code: 0, signal: null }`. */
export interface ExecutorExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * Owns one executor child: its recent stderr lines, its listeners, its temp dir and its shutdown
 * (stdin EOF and SIGTERM, SIGKILL after the grace, then the pipes closed, every listener removed and the
 * temp dir deleted). Its timers (the SIGKILL grace, the pipes' close grace) run on `scheduler`.
 */
export class ExecutorProcess {
  /** Resolves when the child has exited (or failed to spawn), whoever ended it. Never rejects. */
  readonly exited: Promise<ExecutorExit>;
  private readonly stderr: LineRing;
  private stopping: Promise<void> | undefined;
  private readonly ignore = (): void => undefined;

  constructor(
    readonly child: ChildProcess,
    private readonly tempDir: string,
    stderrLineLimit: number,
    stdioMode: boolean,
    /** Drives the SIGKILL and pipe-close graces. @default asyncScheduler */
    private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {
    this.stderr = new LineRing(stderrLineLimit);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', this.stderr.push);
    if (!stdioMode) child.stdout?.setEncoding('utf8');
    // EPIPE on a write after the executor died, or a failed kill(), must not become an uncaught exception.
    child.stdin?.on('error', this.ignore);
    child.on('error', this.ignore);
    this.exited = new Promise<ExecutorExit>((resolve) => {
      if (child.pid === undefined) child.once('error', () => resolve({ code: null, signal: null }));
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  /** Recent stderr lines. */
  stderrLines(): string[] {
    return this.stderr.snapshot();
  }

  /** Listen/direct mode: nobody reads stdout after startup, so drain it to keep the pipe from filling. */
  drainStdout(): void {
    this.child.stdout?.on('data', this.ignore);
  }

  /** Ends the child and cleans up (see the class). Idempotent: every call returns the same shutdown. */
  stop(graceMs: number): Promise<void> {
    this.stopping ??= this.shutdown(graceMs);
    return this.stopping;
  }

  private async shutdown(graceMs: number): Promise<void> {
    const { child } = this;
    let killTimer: Subscription | undefined;
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      // Stdio mode ignores SIGTERM and exits on stdin EOF; direct mode (--exit-on-stdin-close) honours both.
      child.stdin?.end();
      child.kill('SIGTERM');
      killTimer = this.scheduler.schedule(() => child.kill('SIGKILL'), graceMs);
    }
    await this.exited;
    killTimer?.unsubscribe();
    await awaitPipesClosed(child, this.scheduler);
    child.stderr?.off('data', this.stderr.push);
    child.stdout?.off('data', this.ignore);
    child.stdin?.off('error', this.ignore);
    child.off('error', this.ignore);
    await rm(this.tempDir, { recursive: true, force: true });
  }
}

/** After exit: waits for 'close' (every pipe done), destroying pipes that linger (a grandchild may hold one) after a grace on `scheduler`. */
function awaitPipesClosed(child: ChildProcess, scheduler: SchedulerLike): Promise<void> {
  child.stdin?.destroy();
  const open = [child.stdout, child.stderr].some((pipe) => pipe !== null && !pipe.closed);
  if (!open || child.pid === undefined) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      timer.unsubscribe();
      child.off('close', done);
      resolve();
    };
    const timer = scheduler.schedule(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
    }, PIPE_CLOSE_GRACE_MS);
    child.on('close', done);
  });
}
