/**
 * `exec-rx logs --environment ID PROCESS [--follow] [--after SEQ]`: a process's output from a host, a
 * late join as exact as the host's history allows (a note on stderr where it no longer reaches).
 */
import { HostClient } from '../../client/host-client';
import { reportConnection } from '../connection-reporter';
import type { LogsOptions } from '../host-args';
import type { CliIo } from '../io';
import { EVENTS_AHEAD, pipeEvents } from './event-output';
import { describeHostError } from './host-errors';
import { watchedFetch } from './watched-fetch';
import { EXIT_BROKEN_PIPE, EXIT_ERROR } from '../exit-codes';
import { endAfter, LostOutput } from '../lost-output';

/** How long the host may stay unreachable before `logs` without `--follow` gives up (with it: the client's 90 s, through a host restart of up to 60 s). */
const SNAPSHOT_OFFLINE_MS = 2_000;

/**
 * Writes the process's events after `afterSeq` (stdout and pty bytes to stdout, stderr bytes to
 * stderr, unchanged, no faster than those take them) until what the host holds was written, or with `follow` until the process closed,
 * and resolves 0 (the process's own exit code is not what `logs` reports) — or 254 after a last line
 * saying what was lost when the host no longer held part of what was asked (a `truncated` marker: what
 * was written has a hole, as with `run --host`). A host error is one `exec-rx: …` line and 1; a reader
 * of our output that went away, 141. Never rejects.
 */
export async function logsCommand(options: LogsOptions, io: CliIo): Promise<number> {
  const say = (line: string): void => void io.stderr.write(`exec-rx: ${line}\n`);
  const { url, token } = options.access;
  const watch = watchedFetch();
  const reporting = reportConnection(watch.states$, say, { verbose: false, peer: 'the host' });
  const client = new HostClient({ url: options.access.urls ?? url, token, fetch: watch.fetch, ...(options.follow ? {} : { retry: { maxOfflineMs: SNAPSHOT_OFFLINE_MS } }) });
  try {
    const events = client.eventStream(options.environmentId, options.processId, { afterSeq: options.afterSeq, follow: options.follow, highWaterMark: EVENTS_AHEAD });
    const lost = new LostOutput();
    const end = await pipeEvents(events, io, say, (event) => {
      if (event.type === 'truncated') lost.add(event);
      if (event.type === 'closed') watch.finish();
    });
    switch (end.kind) {
      case 'brokenPipe':
        return EXIT_BROKEN_PIPE;
      case 'error':
        say(describeHostError(end.error, url));
        return EXIT_ERROR;
      case 'complete': {
        const done = endAfter(undefined, lost);
        if (done.line !== undefined) say(done.line);
        return done.status;
      }
    }
  } finally {
    watch.finish();
    reporting.unsubscribe();
  }
}
