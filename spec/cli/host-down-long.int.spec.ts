/**
 * Issue 21: a host down for 100 s, past the executor's 80 s retention of a detached session. The
 * executor keeps re-dialling; when the host is back it lets it in (its registration was kept) and tries to take its
 * session back, but the executor killed that session (and its processes) at 80 s: the host does not
 * crash, the process of before is listed `lost` with the reason, its log of before is intact, and the
 * environment is connected again with a new session that runs new processes.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { ApiClient, paths } from '../host/api/api-client';
import { decodeEvents, finished } from '../host/api/api-host';
import { startDirectExecutor } from '../support/executor';
import type { HostChild } from './host-child';
import { hostChildren, loggedOnDisk, stderrOf } from './host-child';

jest.setTimeout(240_000);

const KEY_ID = 'AKIDCLIDOWN';
const SECRET = 'cli-down-secret-do-not-print';
const TOKEN = 'cli-down-operator-token-do-not-print';
const ENV = 'down-1';
/** The executor keeps a detached session this long (docs/protocol.md#resume), and the host stays down longer. */
const DOWN_MS = 100_000;

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

describe('exec-rx host down for 100 s, past the executor\'s retention', () => {
  const hosts = hostChildren('cli-down', { keyId: KEY_ID, secret: SECRET, token: TOKEN });

  it('lists the process of before lost with the reason, keeps its log, and connects the environment with a new session', async () => {
    const first = await hosts.start();
    const executor = await startDirectExecutor({ remoteUrl: first.base, environmentId: ENV, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
    let second: HostChild | undefined;
    try {
      await first.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);
      const api = new ApiClient(first.base, TOKEN);
      const started = await api.post(paths.processes(ENV), { argv: ['sh', '-c', 'echo pid $$; echo before; exec sleep 600'] });
      expect(started.status).toBe(201);
      const processId = (started.body as { id: string }).id;
      const opened = await api.events(paths.events(ENV, processId));
      if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}`);
      await opened.stream.next((event) => event.event === 'output' && Buffer.from((JSON.parse(event.data) as { chunk: string }).chunk, 'base64').toString().includes('before'), 30_000);
      const before = decodeEvents(opened.stream.events).stdout;
      const pid = Number(/^pid (\d+)\n/.exec(before)?.[1]);
      expect(existsSync(`/proc/${pid}`)).toBe(true);
      // A crash keeps what the log wrote (its queue dies with the host): kill it once the output is on disk.
      await loggedOnDisk(hosts.dataDir(), ENV, processId, 'before\n');
      first.run.child.kill('SIGKILL');
      const killedAt = Date.now();
      await first.run.done;
      await opened.stream.close();

      // Down past the executor's retention: it kills the detached session and its processes at 80 s (a
      // clean-clone run under load 10 saw it later than 95 s: the bound is the whole outage and then some).
      const gone = killedAt + DOWN_MS + 20_000;
      while (existsSync(`/proc/${pid}`) && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 500));
      expect({ alive: existsSync(`/proc/${pid}`), afterMs: Date.now() - killedAt > 80_000 }).toEqual({ alive: false, afterMs: true });
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, killedAt + DOWN_MS - Date.now())));
      expect(executor.child.exitCode).toBeNull(); // the executor itself lives on, re-dialling

      second = await hosts.start();
      await second.run.waitFor('stderr', `environment ${ENV}: session `);
      await second.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);
      const stderr = stderrOf(second.run);
      expect(stderr).toMatch(new RegExp(`environment ${ENV}: session \\S+ is gone, a new one was made: 0 processes adopted, 1 lost`));
      expect(second.run.child.exitCode).toBeNull();

      const again = new ApiClient(second.base, TOKEN);
      const listed = await again.get(paths.process(ENV, processId));
      expect(listed.body).toMatchObject({ id: processId, state: 'lost', error: { code: 'PROCESS_GONE' } });
      expect((listed.body as { error: { message: string } }).error.message).toMatch(/no longer has session .*80 s retention/);
      // The log of before is intact.
      const read = await again.events(`${paths.events(ENV, processId)}?follow=false`);
      if (!('stream' in read)) throw new Error(`events answered ${read.refused.status}`);
      expect(sha256(decodeEvents(await read.stream.ended(20_000)).stdout)).toBe(sha256(before));
      // The environment runs new processes in its new session.
      const fresh = await again.post(paths.processes(ENV), { argv: ['sh', '-c', 'echo fresh; exit 3'] });
      expect(fresh.status).toBe(201);
      const result = await finished(again, ENV, (fresh.body as { id: string }).id);
      expect({ stdout: result.stdout, exitCode: result.exitCode }).toEqual({ stdout: 'fresh\n', exitCode: 3 });
    } finally {
      if (second !== undefined) {
        second.run.child.kill('SIGTERM');
        await second.run.done;
      }
      first.run.child.kill('SIGKILL');
      await executor.stop();
    }
  });
});
