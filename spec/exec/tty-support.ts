/** Helpers of the sized-tty specs against the real executor: output markers and the helper processes started. */
import { firstValueFrom, ReplaySubject } from 'rxjs';
import { filter, scan, take, timeout } from 'rxjs/operators';
import type { ExecBackend, ExecProcess, StartedProcess, StartOptions, StartParams } from '../../src';
import type { SendParams } from '../../src/exec/start-params';
import { RESIZE, WRAPPER } from '../../src/exec/tty-wrapper';

/** The PATH of the commands (the executor's own is not inherited without an envPolicy). */
export const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

/** Resolves with all of the pty output once it contains `text`; rejects after `ms`. */
export function waitForText(process: ExecProcess, text: string, ms = 15_000): Promise<string> {
  return firstValueFrom(
    process.text$('pty').pipe(
      scan((all, part) => all + part, ''),
      filter((all) => all.includes(text)),
      take(1),
      timeout({ first: ms, with: () => Promise.reject(new Error(`no ${JSON.stringify(text)} within ${ms} ms`)) }),
    ),
  );
}

/** What a `process/start` sent by the watched backend was. */
export type StartKind = 'wrapper' | 'resize' | 'remove' | 'other';

/** One `process/start` the backend sent. */
export interface SeenStart {
  readonly kind: StartKind;
  readonly params: SendParams;
  readonly options: StartOptions | undefined;
  readonly started: Promise<StartedProcess>;
}

/**
 * Every `process/start` `backend` sent (the sized start's wrapper and helpers included), with the peak
 * of resize helpers running at once, and how many times `start` itself was called.
 */
export interface StartWatch {
  readonly seen$: ReplaySubject<SeenStart>;
  readonly count: (kind: StartKind) => number;
  /** Calls of `backend.start` (each sends none, one, or several `process/start`s). */
  readonly calls: () => number;
  readonly peakResizers: () => number;
  restore(): void;
}

const kindOf = (argv: readonly string[]): StartKind => {
  if (argv[0] === 'sh' && argv[2] === WRAPPER) return 'wrapper';
  if (argv[0] === 'sh' && argv[2] === RESIZE) return 'resize';
  if (argv[0] === 'rm' && (argv[3] ?? '').includes('exec-rx-tty-')) return 'remove';
  return 'other';
};

/**
 * Spies on `backend.send`, the raw `process/start` (the sized start sends the wrapper and every helper
 * with it, never calling `start` again), and counts the calls of `backend.start`. A resize helper counts
 * as running from its send until its process closed or failed (or its send rejected).
 */
export function watchStarts(backend: ExecBackend): StartWatch {
  const original = backend.send.bind(backend);
  const originalStart = backend.start.bind(backend);
  const seen$ = new ReplaySubject<SeenStart>();
  const seen: SeenStart[] = [];
  let running = 0;
  let peak = 0;
  let calls = 0;
  const startSpy = jest.spyOn(backend, 'start').mockImplementation((params: StartParams, options?: StartOptions) => {
    calls += 1;
    return originalStart(params, options);
  });
  const spy = jest.spyOn(backend, 'send').mockImplementation((params: SendParams, options?: StartOptions) => {
    const kind = kindOf(params.argv);
    const started = original(params, options);
    const entry = { kind, params, options, started };
    seen.push(entry);
    seen$.next(entry);
    if (kind === 'resize') {
      running += 1;
      peak = Math.max(peak, running);
      const finished = (): void => void (running -= 1);
      started.then(({ process }) => process.state$.pipe(filter((s) => s === 'closed' || s === 'failed'), take(1)).subscribe(finished), finished);
    }
    return started;
  });
  return {
    seen$,
    count: (kind) => seen.filter((s) => s.kind === kind).length,
    calls: () => calls,
    peakResizers: () => peak,
    restore: () => {
      spy.mockRestore();
      startSpy.mockRestore();
      seen$.complete();
    },
  };
}
