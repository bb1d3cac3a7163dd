/**
 * Issue 21, stdin across a host restart: `exec-rx host --data-dir` (the built cli) runs a command that
 * echoes its stdin lines with a marker and exits 0 at end-of-file, started with `pipeStdin` (a FIFO fed
 * by a helper process). "a" is written (writeId w1), the host is SIGKILLed and started again on the same
 * data dir; it takes back the command and its feeder (the feeder is not counted), a retry of w1 is
 * applied once, "b" (w2) and the end go through, and the command prints each line once and exits 0.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient, paths } from '../host/api/api-client';
import type { SseEvent } from '../host/api/sse-reader';
import { startDirectExecutor } from '../support/executor';
import type { CliRun } from './cli-process';
import { startCli } from './cli-process';

jest.setTimeout(120_000);

const KEY_ID = 'AKIDCLISTDIN';
const SECRET = 'cli-stdin-secret-do-not-print';
const TOKEN = 'cli-stdin-operator-token-do-not-print';
const ENV = 'stdin-1';
const SCRIPT = 'while IFS= read -r line; do echo "<$line>"; done; echo EOF; exit 0';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** The output text of `events`. */
const textOf = (events: readonly SseEvent[]): string =>
  events
    .filter((event) => event.event === 'output')
    .map((event) => Buffer.from((JSON.parse(event.data) as { chunk: string }).chunk, 'base64').toString('utf8'))
    .join('');

describe('exec-rx host SIGKILLed and started again while a command reads its stdin', () => {
  let work: string;
  const hostEnv = (): NodeJS.ProcessEnv => ({ ...process.env, XDG_STATE_HOME: work, EXEC_RX_ACCESS_KEY_ID: KEY_ID, EXEC_RX_SECRET_ACCESS_KEY: SECRET, EXEC_RX_OPERATOR_TOKEN: TOKEN });
  const dataDir = (): string => join(work, 'data');

  async function startHost(): Promise<{ run: CliRun; base: string }> {
    const run = startCli(['host', '--port', '0', '--data-dir', dataDir()], hostEnv());
    await run.waitFor('stdout', '--environment-id <environment-id>\n');
    const base = /^exec-rx host listening on (\S+)$/m.exec(run.stdout.map((c) => c.text).join(''))?.[1];
    if (base === undefined) throw new Error(`no url: ${run.stdout.map((c) => c.text).join('')}`);
    return { run, base };
  }

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-cli-stdin-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('takes the command and its feeder back: a retried write applies once, later writes and the end go through', async () => {
    const first = await startHost();
    const executor = await startDirectExecutor({ remoteUrl: first.base, environmentId: ENV, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
    let second: { run: CliRun; base: string } | undefined;
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
      const record = JSON.parse(readFileSync(join(dataDir(), 'processes', ENV, processId, 'stdin.json'), 'utf8')) as Record<string, unknown>;
      expect(record).toMatchObject({ version: 1, target: 'fifo', endWriteId: null, writes: [{ writeId: 'w1', firstWriteId: 1, count: 1 }] });
      expect(record['nextWriteId']).toBe(2);
      expect(readdirSync(join(dataDir(), 'processes', ENV))).toContain(String(record['writerProcessId']));

      first.run.child.kill('SIGKILL');
      expect(await first.run.done).toEqual({ code: null, signal: 'SIGKILL' });
      await opened.stream.close();

      second = await startHost();
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
    } finally {
      if (second !== undefined) {
        second.run.child.kill('SIGTERM');
        await second.run.done;
      }
      first.run.child.kill('SIGKILL');
      await first.run.done;
      await executor.stop();
    }
  });
});
