/**
 * What a process reports of itself in one value: what it retains, all its output collected, its exit;
 * and how `ExecProcess.collect` gathers that output.
 */
import type { Observable } from 'rxjs';
import { forkJoin, lastValueFrom } from 'rxjs';
import { map, take, toArray } from 'rxjs/operators';
import { abortable } from '../rpc/abort';
import type { OutputStream } from '../wire/process-event';

/** What {@link ExecProcess.retained} reports: the replay history a process keeps, for bookkeeping. */
export interface RetainedHistory {
  /** Events kept for replay to late subscribers. */
  readonly events: number;
  /** Output bytes those events hold. */
  readonly bytes: number;
  /** Current subscribers of `events$` and its views. */
  readonly subscribers: number;
}

/** What {@link ExecProcess.collect} resolves with: all output as UTF-8 text, one string per stream. */
export interface CollectedOutput {
  /** Everything written to stdout. */
  readonly stdout: string;
  /** Everything written to stderr. */
  readonly stderr: string;
  /** Everything written to the terminal (a tty process; stdout and stderr merged). */
  readonly pty: string;
  /** The exit code (128 + signal number for a signalled process). */
  readonly exitCode: number;
}

/** What {@link ExecProcess.wait} resolves with once the process has exited. */
export interface ProcessExit {
  /** The exit code (128 + signal number for a signalled process: 130 after `interrupt`, 137 after `terminate`). */
  readonly exitCode: number;
}

/** {@link CollectedOutput} of the text of each stream and the exit code, once all completed; `signal` aborts (see `ExecProcess.collect`). */
export function collectOutput(text$: (stream: OutputStream) => Observable<string>, exitCode$: Observable<number>, signal: AbortSignal | undefined): Promise<CollectedOutput> {
  const text = (stream: OutputStream): Observable<string> => text$(stream).pipe(toArray(), map((parts) => parts.join('')));
  const all$ = forkJoin([text('stdout'), text('stderr'), text('pty'), exitCode$.pipe(take(1))]);
  return lastValueFrom(all$.pipe(abortable(signal), map(([stdout, stderr, pty, exitCode]) => ({ stdout, stderr, pty, exitCode }))));
}
