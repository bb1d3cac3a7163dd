/**
 * Issue 21, a host restart costs nothing: `exec-rx host --data-dir` (the built cli) is SIGKILLed while its
 * executor streams 10 MiB at 256 KiB/s, and started again on the same data dir at once. The executor is
 * still alive: it re-dials the url it registered with, the restarted host knows that registration (its
 * token's digest is in the data dir) and lets it in at once, without a 409, and takes its
 * session back. The process never dies (the same pid before and after), a subscriber that reconnects by
 * seq gets the rest, and what both readers got is sha256-exact with contiguous seqs; the exit code is 0.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { ApiClient, paths } from '../host/api/api-client';
import { startDirectExecutor } from '../support/executor';
import type { HostChild } from './host-child';
import { describedOnDisk, hostChildren, outputOf, stderrOf } from './host-child';

jest.setTimeout(150_000);

const KEY_ID = 'AKIDCLIADOPT';
const SECRET = 'cli-adopt-secret-do-not-print';
const TOKEN = 'cli-adopt-operator-token-do-not-print';
const ENV = 'adopted-1';
/** 160 chunks of 64 KiB, four a second: 10 MiB at 256 KiB/s, after a line with the shell's pid. */
const CHUNKS = 160;
const SCRIPT = `echo pid $$; i=0; while [ $i -lt ${CHUNKS} ]; do printf '%065535d\\n' $i; i=$((i+1)); sleep 0.25; done`;

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const expectedAfterPid = (): string => Array.from({ length: CHUNKS }, (_v, i) => `${String(i).padStart(65535, '0')}\n`).join('');

describe('exec-rx host SIGKILLed and started again while its executor streams', () => {
  const hosts = hostChildren('cli-adopt', { keyId: KEY_ID, secret: SECRET, token: TOKEN });

  it('takes the executor back: the same process goes on, and a reader resuming by seq gets all of it exactly once', async () => {
    const first = await hosts.start();
    const executor = await startDirectExecutor({ remoteUrl: first.base, environmentId: ENV, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
    let second: HostChild | undefined;
    try {
      await first.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);
      const api = new ApiClient(first.base, TOKEN);
      const started = await api.post(paths.processes(ENV), { argv: ['sh', '-c', SCRIPT] });
      expect(started.status).toBe(201);
      const processId = (started.body as { id: string }).id;

      // The first reader: a few chunks in (the pid line, then output), the host dies without a chance to flush.
      const opened = await api.events(paths.events(ENV, processId));
      if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}`);
      await opened.stream.next((event) => event.event === 'output' && Number(event.id ?? '0') >= 8, 30_000);
      const before = outputOf(opened.stream.events);
      const pid = Number(/^pid (\d+)\n/.exec(before.text)?.[1]);
      expect(Number.isInteger(pid) && existsSync(`/proc/${pid}`)).toBe(true);
      // What the restarted host lists it with is what was on disk: the crash comes once its metadata is.
      await describedOnDisk(hosts.dataDir(), ENV, processId);
      first.run.child.kill('SIGKILL');
      expect(await first.run.done).toEqual({ code: null, signal: 'SIGKILL' });
      await opened.stream.close();
      const firstRead = outputOf(opened.stream.events);

      second = await hosts.start();
      expect(second.base).toBe(first.base); // the port of before: the executor re-dials the url it registered with
      await second.run.waitFor('stderr', `environment ${ENV}: session `);
      await second.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);
      const stderr = stderrOf(second.run);
      expect(stderr).toMatch(new RegExp(`environment ${ENV}: session \\S+ taken back: 1 process adopted, 0 lost`));
      expect(stderr).not.toContain('registration of a previous run'); // no 409: the registration of before was kept
      expect(existsSync(`/proc/${pid}`)).toBe(true); // the process never died

      const again = new ApiClient(second.base, TOKEN);
      const listed = await again.get(paths.process(ENV, processId));
      expect(listed.body).toMatchObject({ id: processId, state: 'running', argv: ['sh', '-c', SCRIPT] });
      const lastSeq = firstRead.seqs[firstRead.seqs.length - 1] ?? 0;
      const resumed = await again.events(paths.events(ENV, processId), { headers: { 'last-event-id': String(lastSeq) } });
      if (!('stream' in resumed)) throw new Error(`events answered ${resumed.refused.status}: ${resumed.refused.text}`);
      const restEvents = await resumed.stream.ended(120_000);
      const rest = outputOf(restEvents);

      expect(rest.others).toEqual(['exited', 'closed']);
      const seqs = [...firstRead.seqs, ...rest.seqs];
      expect(seqs.every((seq, index) => seq === index + 1)).toBe(true);
      const all = firstRead.text + rest.text;
      expect(all.startsWith(`pid ${pid}\n`)).toBe(true);
      expect({ bytes: all.length, sha256: sha256(all) }).toEqual({ bytes: `pid ${pid}\n`.length + CHUNKS * 65536, sha256: sha256(`pid ${pid}\n${expectedAfterPid()}`) });
      const exited = restEvents.find((event) => event.event === 'exited');
      expect(JSON.parse(exited?.data ?? '{}')).toMatchObject({ exitCode: 0 });
      expect(existsSync(`/proc/${pid}`)).toBe(false);
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
