/**
 * Issue 21, stdin across a host restart: `exec-rx host --data-dir` (the built cli) runs a command that
 * echoes its stdin lines with a marker and exits 0 at end-of-file, started with `pipeStdin` (a FIFO fed
 * by a helper process). "a" is written (writeId w1), the host is SIGKILLed, or stopped gracefully
 * (SIGTERM: it closes its managers, which must not forget the stdin record nor release the feeder, issue
 * 38), and started again on the same data dir; it takes back the command and its feeder (the feeder is
 * not counted), a retry of w1 is applied once, "b" (w2) and the end go through, and the command prints
 * each line once and exits 0.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient, paths } from '../host/api/api-client';
import type { SseEvent } from '../host/api/sse-reader';
import { startDirectExecutor } from '../support/executor';
import { waitForFileGone } from '../support/wait-for-file';
import type { HostChild } from './host-child';
import { hostChildren } from './host-child';

jest.setTimeout(120_000);

const KEY_ID = 'AKIDCLISTDIN';
const SECRET = 'cli-stdin-secret-do-not-print';
const TOKEN = 'cli-stdin-operator-token-do-not-print';
const SCRIPT = 'while IFS= read -r line; do echo "<$line>"; done; echo EOF; exit 0';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** The output text of `events`. */
const textOf = (events: readonly SseEvent[]): string =>
  events
    .filter((event) => event.event === 'output')
    .map((event) => Buffer.from((JSON.parse(event.data) as { chunk: string }).chunk, 'base64').toString('utf8'))
    .join('');

/** Stops what a test started: the second host gracefully, the first (if still alive) with SIGKILL, then the executor. */
async function stopAll(first: HostChild, second: HostChild | undefined, executor: { stop(): Promise<void> }): Promise<void> {
  if (second !== undefined) {
    second.run.child.kill('SIGTERM');
    await second.run.done;
  }
  first.run.child.kill('SIGKILL');
  await first.run.done;
  await executor.stop();
}

describe('exec-rx host stopped (SIGKILL, SIGTERM) and started again while a command reads its stdin', () => {
  const hosts = hostChildren('cli-stdin', { keyId: KEY_ID, secret: SECRET, token: TOKEN });
  const dataDir = hosts.dataDir;

  it.each([
    ['SIGKILL', { code: null, signal: 'SIGKILL' }],
    ['SIGTERM', { code: 0, signal: null }],
  ] as const)('%s: takes the command and its feeder back: a retried write applies once, later writes and the end go through', async (signal, exit) => {
    // Its own environment: the data dir is the file's, shared with the other cases.
    const ENV = `stdin-${signal.toLowerCase()}`;
    const first = await hosts.start();
    const executor = await startDirectExecutor({ remoteUrl: first.base, environmentId: ENV, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
    let second: HostChild | undefined;
    try {
      await first.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);
      const api = new ApiClient(first.base, TOKEN);
      const started = await api.post(paths.processes(ENV), { argv: ['sh', '-c', SCRIPT], pipeStdin: true });
      expect(started.status).toBe(201);
      const processId = (started.body as { id: string }).id;

      const opened = await api.events(paths.events(ENV, processId));
      if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}`);
      expect(await api.post(paths.stdin(ENV, processId), { writeId: 'w1', data: b64('a\n') })).toMatchObject({ status: 200 });
      await opened.stream.next((event) => event.event === 'output', 30_000);
      expect(textOf(opened.stream.events)).toBe('<a>\n');

      // What was persisted: ids and counters, never the bytes.
      const record = JSON.parse(readFileSync(join(dataDir(), 'stdin', `${ENV}.${processId}.json`), 'utf8')) as Record<string, unknown>;
      expect(record).toMatchObject({ version: 1, target: 'fifo', endWriteId: null, writes: [{ writeId: 'w1', firstWriteId: 1, count: 1 }] });
      expect(record['nextWriteId']).toBe(2);
      expect(readdirSync(join(dataDir(), 'processes', ENV))).toContain(String(record['writerProcessId']));

      first.run.child.kill(signal);
      expect(await first.run.done).toEqual(exit);
      await opened.stream.close();

      second = await hosts.start();
      expect(second.base).toBe(first.base);
      await second.run.waitFor('stderr', `environment ${ENV}: session `);
      await second.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);
      // The feeder is taken back with its command and not counted.
      expect(second.run.stderr.map((c) => c.text).join('')).toMatch(new RegExp(`environment ${ENV}: session \\S+ taken back: 1 process adopted, 0 lost`));

      const again = new ApiClient(second.base, TOKEN);
      const listed = await again.get(paths.processes(ENV));
      expect((listed.body as { processes: unknown[] }).processes).toEqual([expect.objectContaining({ id: processId, state: 'running', pipeStdin: true, argv: ['sh', '-c', SCRIPT] })]);
      expect(await again.post(paths.stdin(ENV, processId), { writeId: 'w1', data: b64('a\n') })).toMatchObject({ status: 200, body: { writeId: 'w1', status: 'accepted' } });
      expect(await again.post(paths.stdin(ENV, processId), { writeId: 'w2', data: b64('b\n') })).toMatchObject({ status: 200 });
      expect(await again.post(paths.stdinEnd(ENV, processId))).toMatchObject({ status: 200, body: { status: 'ended' } });

      const all = await again.events(paths.events(ENV, processId));
      if (!('stream' in all)) throw new Error(`events answered ${all.refused.status}: ${all.refused.text}`);
      const events = await all.stream.ended(60_000);
      expect(textOf(events)).toBe('<a>\n<b>\nEOF\n');
      expect(JSON.parse(events.find((event) => event.event === 'exited')?.data ?? '{}')).toMatchObject({ exitCode: 0 });
      // Its stdin record goes once it ended: nothing is kept for a process that reads no more.
      await waitForFileGone(join(dataDir(), 'stdin', `${ENV}.${processId}.json`));
    } finally {
      await stopAll(first, second, executor);
    }
  });

  it('takes a sized tty back resizable: a resize after the restart reaches the command, and its pty path file goes once it ends', async () => {
    const env = 'stdin-tty';
    const first = await hosts.start();
    const executor = await startDirectExecutor({ remoteUrl: first.base, environmentId: env, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
    let second: HostChild | undefined;
    try {
      await first.run.waitFor('stderr', `environment ${env} generation 1: connected`);
      const api = new ApiClient(first.base, TOKEN);
      const argv = ['sh', '-c', 'trap \'echo "size $(stty size)"\' WINCH; echo ready; while :; do sleep 0.1; done'];
      const started = await api.post(paths.processes(env), { argv, tty: { rows: 20, cols: 70 } });
      expect(started.status).toBe(201);
      const processId = (started.body as { id: string }).id;
      const opened = await api.events(paths.events(env, processId));
      if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}`);
      await opened.stream.next((event) => event.event === 'output' && textOf([event]).includes('ready'), 30_000);
      const record = JSON.parse(readFileSync(join(dataDir(), 'stdin', `${env}.${processId}.json`), 'utf8')) as { target: string; ttyPath: unknown };
      const ttyPath = record.ttyPath;
      if (typeof ttyPath !== 'string') throw new Error(`no pty path recorded: ${JSON.stringify(record)}`);
      expect({ target: record.target, recorded: existsSync(ttyPath) }).toEqual({ target: 'pty', recorded: true });

      first.run.child.kill('SIGKILL');
      expect(await first.run.done).toEqual({ code: null, signal: 'SIGKILL' });
      await opened.stream.close();

      second = await hosts.start();
      await second.run.waitFor('stderr', `environment ${env} generation 1: connected`);
      expect(second.run.stderr.map((c) => c.text).join('')).toMatch(new RegExp(`environment ${env}: session \\S+ taken back: 1 process adopted, 0 lost`));
      const again = new ApiClient(second.base, TOKEN);
      const live = await again.events(paths.events(env, processId));
      if (!('stream' in live)) throw new Error(`events answered ${live.refused.status}`);
      expect(await again.post(`${paths.process(env, processId)}/resize`, { rows: 33, cols: 101 })).toMatchObject({ status: 200, body: { rows: 33, cols: 101 } });
      await live.stream.next(() => textOf(live.stream.events).includes('size 33 101'), 30_000);

      expect(await again.post(paths.terminate(env, processId))).toMatchObject({ status: 200 });
      await live.stream.ended(30_000);
      // The second host removes the recorded path once the command ended (its stop awaits that helper).
      second.run.child.kill('SIGTERM');
      expect(await second.run.done).toEqual({ code: 0, signal: null });
      expect(existsSync(ttyPath)).toBe(false);
    } finally {
      await stopAll(first, second, executor);
    }
  });
});
