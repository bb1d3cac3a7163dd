/**
 * Issue 21, a host restart costs nothing, for its clients: `exec-rx run --host` starts a command that
 * writes for about 20 s and exits 7; `exec-rx logs --follow` and a HostClient `events$` subscriber follow
 * it too. The host (the built cli, with a data dir) is SIGKILLed a few seconds in, stays down until the
 * clients' attempts are refused (a bounded real-time outage: it IS the scenario), and is started again on
 * the same data dir; its executor comes back and the process is taken back. Meanwhile a client that came
 * back before the executor reads the log and waits. All three come through as through a dropped
 * connection: their output sha256-exact, seqs contiguous, no duplicate, the run exiting 7.
 */
import { createHash } from 'node:crypto';
import { Subject, takeUntil } from 'rxjs';
import { HostClient } from '../../src/client';
import { countingFetch, Transcript, within } from '../client/client-setup';
import { startDirectExecutor } from '../support/executor';
import type { CliRun } from './cli-process';
import { startCli } from './cli-process';
import type { HostChild } from './host-child';
import { hostChildren } from './host-child';

jest.setTimeout(150_000);

const KEY_ID = 'AKIDCLIRIDE';
const SECRET = 'cli-ride-secret-do-not-print';
const TOKEN = 'cli-ride-operator-token-do-not-print';
const ENV = 'ride-1';
/** 80 lines of 4 KiB, four a second: about 20 s of output, then exit 7. */
const LINES = 80;
const SCRIPT = `i=0; while [ $i -lt ${LINES} ]; do printf '%04095d\\n' $i; i=$((i+1)); sleep 0.25; done; exit 7`;
const EXPECTED = Array.from({ length: LINES }, (_v, i) => `${String(i).padStart(4095, '0')}\n`).join('');
/** The outage is at most this long (the clients' attempts being refused ends it sooner). */
const OUTAGE_BOUND_MS = 10_000;

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const text = (chunks: CliRun['stdout']): string => chunks.map((c) => c.text).join('');

describe('clients of exec-rx host ride through its restart (SIGKILL, down a few seconds, started again on the same data dir)', () => {
  const hosts = hostChildren('cli-ride', { keyId: KEY_ID, secret: SECRET, token: TOKEN });
  const clientEnv = (base: string): NodeJS.ProcessEnv => ({ ...process.env, EXEC_RX_TOKEN: TOKEN, EXEC_RX_HOST: base });


  it('run --host exits with the command\'s code and all its output; logs --follow and events$ get all of it once, in order', async () => {
    const first = await hosts.start();
    const executor = await startDirectExecutor({ remoteUrl: first.base, environmentId: ENV, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
    let second: HostChild | undefined;
    const stop$ = new Subject<void>();
    try {
      await first.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);
      const run = startCli(['run', '--host', first.base, '--environment', ENV, '--verbose', '--', 'sh', '-c', SCRIPT], clientEnv(first.base));
      run.child.stdin.end();
      await run.waitFor('stderr', `in environment ${ENV} (exec-rx logs`);
      const processId = /started process (\S+) in environment/.exec(text(run.stderr))?.[1];
      if (processId === undefined) throw new Error(`no process id: ${text(run.stderr)}`);
      const logs = startCli(['logs', '--environment', ENV, processId, '--follow'], clientEnv(first.base));
      logs.child.stdin.end();
      const counting = countingFetch();
      const client = new HostClient({ url: first.base, token: TOKEN, fetch: counting.fetch });
      const transcript = new Transcript(client.events$(ENV, processId).pipe(takeUntil(stop$)));

      // A few lines in, everywhere: the host dies without a chance to flush.
      await within(transcript.when(() => transcript.lastSeq >= 6), 30_000, 'six lines through events$');
      await logs.waitFor('stdout', EXPECTED.slice(0, 4096 * 6));
      await run.waitFor('stdout', EXPECTED.slice(0, 4096 * 6));
      first.run.child.kill('SIGKILL');
      expect(await first.run.done).toEqual({ code: null, signal: 'SIGKILL' });
      // Down until the clients are refused a few times (the outage itself, bounded).
      await within(counting.failed(3), OUTAGE_BOUND_MS, 'three refused attempts of events$');

      second = await hosts.start();
      expect(second.base).toBe(first.base);
      const reachedBeforeTakeBack = !text(second.run.stderr).includes(`environment ${ENV}: session `);
      await within(second.run.waitFor('stderr', `environment ${ENV}: session `), 30_000, 'the executor taken back');
      expect(text(second.run.stderr)).toMatch(new RegExp(`environment ${ENV}: session \\S+ taken back: 1 process adopted, 0 lost`));

      const [ran, followed, streamed] = await within(Promise.all([run.done, logs.done, transcript.done]), 60_000, 'the end of the run, logs and events$');
      expect({ ran, followed, streamed }).toEqual({ ran: { code: 7, signal: null }, followed: { code: 0, signal: null }, streamed: undefined });
      const expected = { bytes: EXPECTED.length, sha256: sha256(EXPECTED) };
      const runOut = text(run.stdout);
      const logsOut = text(logs.stdout);
      expect({ bytes: runOut.length, sha256: sha256(runOut) }).toEqual(expected);
      expect({ bytes: logsOut.length, sha256: sha256(logsOut) }).toEqual(expected);
      const stdout = transcript.bytes('stdout');
      expect({ bytes: stdout.byteLength, sha256: sha256(stdout) }).toEqual(expected);
      const seqs = transcript.events.map((event) => (event.type === 'truncated' ? -1 : event.seq));
      expect(seqs.every((seq, index) => seq === index + 1)).toBe(true);
      expect(transcript.events.filter((event) => event.type !== 'output').map((event) => (event.type === 'exited' ? `exited:${event.exitCode}` : event.type))).toEqual(['exited:7', 'closed']);
      globalThis.process.stdout.write(`clients through a host restart: ${counting.failures()} refused attempts of events$, host back ${reachedBeforeTakeBack ? 'before' : 'after'} its executor was taken back\n`);
    } finally {
      stop$.next();
      if (second !== undefined) {
        second.run.child.kill('SIGTERM');
        await second.run.done;
      }
      first.run.child.kill('SIGKILL');
      await executor.stop();
    }
  });
});
