/**
 * Issue 21, a host restart costs nothing: a keyed start (`Idempotency-Key`) in flight when `exec-rx host
 * --data-dir` (the built cli) crashes. The host is armed with a test-only fault point
 * (`EXEC_RX_FAULT`, docs/architecture.md) where it SIGKILLs itself during the start, then started again,
 * unarmed, on the same data dir; its real executor comes back and is taken back. The same POST again:
 * before the record → a new start (nothing was recorded or sent); recorded, not sent → 409
 * `START_UNKNOWN` and no process; after the executor answered → the same process, replayed. Never two.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiResponse } from '../host/api/api-client';
import { ApiClient, paths } from '../host/api/api-client';
import { startDirectExecutor } from '../support/executor';
import type { CliRun } from './cli-process';
import { startCli } from './cli-process';

jest.setTimeout(120_000);

const KEY_ID = 'AKIDCLISTARTFAULT';
const SECRET = 'cli-start-fault-secret-do-not-print';
const TOKEN = 'cli-start-fault-operator-token-do-not-print';
const REQUEST = { argv: ['sh', '-c', 'echo started; sleep 30'] };

interface Listed {
  readonly processes: readonly { readonly id: string; readonly state: string; readonly argv: readonly string[] }[];
}

describe('exec-rx host crashed during a keyed start, then started again on its data dir', () => {
  let work: string;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-cli-start-fault-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  async function startHost(dataDir: string, fault: string | undefined): Promise<{ run: CliRun; base: string }> {
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: work, EXEC_RX_ACCESS_KEY_ID: KEY_ID, EXEC_RX_SECRET_ACCESS_KEY: SECRET, EXEC_RX_OPERATOR_TOKEN: TOKEN };
    delete env['EXEC_RX_FAULT'];
    const run = startCli(['host', '--port', '0', '--data-dir', dataDir], fault === undefined ? env : { ...env, EXEC_RX_FAULT: fault });
    await run.waitFor('stdout', '--environment-id <environment-id>\n');
    const base = /^exec-rx host listening on (\S+)$/m.exec(run.stdout.map((c) => c.text).join(''))?.[1];
    if (base === undefined) throw new Error(`no url: ${run.stdout.map((c) => c.text).join('')}`);
    return { run, base };
  }

  /**
   * Crashes a host at `fault` during a keyed start, starts it again, waits for its executor to be taken
   * back, and POSTs the same start again: resolves with that answer and the environment's list after it.
   */
  async function crashAndRetry(fault: string, environmentId: string): Promise<{ retried: ApiResponse; listed: Listed; stderr: string }> {
    const dataDir = join(work, environmentId);
    const key = `key-${environmentId}`;
    const first = await startHost(dataDir, fault);
    const executor = await startDirectExecutor({ remoteUrl: first.base, environmentId, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
    let second: { run: CliRun; base: string } | undefined;
    try {
      await first.run.waitFor('stderr', `environment ${environmentId} generation 1: connected`);
      const api = new ApiClient(first.base, TOKEN);
      // The host dies during the start: the request gets no answer.
      await expect(api.post(paths.processes(environmentId), REQUEST, { headers: { 'idempotency-key': key } })).rejects.toThrow();
      expect(await first.run.done).toEqual({ code: null, signal: 'SIGKILL' });

      second = await startHost(dataDir, undefined);
      // Taken back (`environment …: session … taken back`): a start waits for the session's record.
      await second.run.waitFor('stderr', `environment ${environmentId} generation 1: connected`);
      const again = new ApiClient(second.base, TOKEN);
      const retried = await again.post(paths.processes(environmentId), REQUEST, { headers: { 'idempotency-key': key } });
      const listed = (await again.get(paths.processes(environmentId))).body as Listed;
      return { retried, listed, stderr: second.run.stderr.map((c) => c.text).join('') };
    } finally {
      if (second !== undefined) {
        second.run.child.kill('SIGTERM');
        await second.run.done;
      }
      first.run.child.kill('SIGKILL');
      await executor.stop();
    }
  }

  it('start:before-record: nothing was recorded or sent, so the retry starts the process (one listed)', async () => {
    const { retried, listed } = await crashAndRetry('start:before-record', 'fault-before-record');
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    const id = (retried.body as { id: string }).id;
    expect(listed.processes.map((p) => ({ id: p.id, argv: p.argv }))).toEqual([{ id, argv: REQUEST.argv }]);
  });

  it('start:after-record: recorded but never sent, so the retry is 409 START_UNKNOWN and no process exists', async () => {
    const { retried, listed, stderr } = await crashAndRetry('start:after-record', 'fault-after-record');
    expect(stderr).toMatch(/environment fault-after-record: session \S+ taken back: 0 processes adopted, 0 lost/);
    expect(retried.status).toBe(409);
    expect(retried.body).toMatchObject({ code: 'START_UNKNOWN' });
    expect(listed.processes).toEqual([]);
  });

  it('start:after-send: the executor started it, so the retry replays that process, running (one listed)', async () => {
    const { retried, listed, stderr } = await crashAndRetry('start:after-send', 'fault-after-send');
    expect(stderr).toMatch(/environment fault-after-send: session \S+ taken back: 1 process adopted, 0 lost/);
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    const id = (retried.body as { id: string }).id;
    expect(retried.body).toMatchObject({ id, argv: REQUEST.argv, state: 'running' });
    expect(listed.processes.map((p) => ({ id: p.id, state: p.state }))).toEqual([{ id, state: 'running' }]);
  });
});
