/**
 * `exec-rx host --data-dir`, the built cli, killed with SIGKILL while a process writes heavily, then
 * started again on the same data dir: the process of before is listed `unknown` (through the API and
 * `exec-rx ls --json`), its log is readable up to its last written record with contiguous seqs from 1
 * (its output a prefix of what the command writes), and `exec-rx logs` and `GET …/log` give the same bytes;
 * `exec-rx logs --follow` waits for the executor to come back, and ends once a new one has lost the process.
 */
import { createHash } from 'node:crypto';
import { ApiClient, paths } from '../host/api/api-client';
import { decodeEvents } from '../host/api/api-host';
import { startDirectExecutor } from '../support/executor';
import { runCli, runCliBytes, startCli } from './cli-process';
import { hostChildren } from './host-child';

// Heavy: `seq` floods the log until the SIGKILL, then the log is read whole four times (events, logs, --follow, /log); 44 s alone under load 6, past 120 s in a clean-clone run under load 10.
jest.setTimeout(240_000);

const KEY_ID = 'AKIDCLIRESTART';
const SECRET = 'cli-restart-secret-do-not-print';
const TOKEN = 'cli-restart-operator-token-do-not-print';
const ENV = 'killed-1';

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

describe('exec-rx host killed with SIGKILL, then started again on the same data dir', () => {
  const hosts = hostChildren('cli-restart', { keyId: KEY_ID, secret: SECRET, token: TOKEN });

  it('lists the process unknown and reads its log up to its last written record', async () => {
    const first = await hosts.start();
    const executor = await startDirectExecutor({ remoteUrl: first.base, environmentId: ENV, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
    let processId: string;
    try {
      await first.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);
      const api = new ApiClient(first.base, TOKEN);
      const started = await api.post(paths.processes(ENV), { argv: ['seq', '1', '1000000000'] });
      expect(started.status).toBe(201);
      processId = (started.body as { id: string }).id;
      // Heavy output under way: a few thousand events in, the host dies without a chance to flush.
      const events = await api.events(paths.events(ENV, processId));
      if (!('stream' in events)) throw new Error(`events answered ${events.refused.status}`);
      await events.stream.next((event) => Number(event.id ?? '0') >= 3000, 30_000);
      first.run.child.kill('SIGKILL');
      expect(await first.run.done).toEqual({ code: null, signal: 'SIGKILL' });
      await events.stream.close();
    } finally {
      await executor.stop();
    }

    const second = await hosts.start();
    try {
      const api = new ApiClient(second.base, TOKEN);
      const listed = await api.get(paths.processes(ENV));
      expect(listed.body).toEqual({ processes: [{ id: processId, environmentId: ENV, argv: ['seq', '1', '1000000000'], tty: false, pipeStdin: false, state: 'unknown', exitCode: null, error: null, startedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown, exitedAt: null, startedBy: 'env' }] });
      const ls = await runCli(['ls', '--json'], '', { ...process.env, EXEC_RX_TOKEN: TOKEN, EXEC_RX_HOST: second.base });
      expect(ls.code).toBe(0);
      expect(JSON.parse(ls.stdout)).toMatchObject({ environments: [{ id: ENV, generation: 0, state: 'offline', processes: [{ id: processId, state: 'unknown', exitCode: null }] }] });

      const opened = await api.events(`${paths.events(ENV, processId)}?follow=false`);
      if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}`);
      const read = await opened.stream.ended(60_000);
      const seqs = read.filter((event) => event.id !== undefined).map((event) => Number(event.id));
      expect(seqs.length).toBeGreaterThan(0);
      expect(seqs.every((seq, index) => seq === index + 1)).toBe(true);
      expect(read.map((event) => event.event).filter((name) => name !== 'output')).toEqual([]);
      // What was logged is a prefix of `seq`'s output: whole lines 1, 2, 3 … and maybe a part of the next.
      const { stdout } = decodeEvents(read);
      const lines = stdout.split('\n');
      const partial = lines.pop() ?? '';
      expect(lines.every((line, index) => line === String(index + 1))).toBe(true);
      expect(String(lines.length + 1).startsWith(partial)).toBe(true);
      expect(lines.length).toBeGreaterThan(1000);

      const logged = await runCliBytes(['logs', '--environment', ENV, processId], '', { ...process.env, EXEC_RX_TOKEN: TOKEN, EXEC_RX_HOST: second.base });
      expect({ code: logged.code, stderr: logged.stderr, sha256: sha256(logged.stdout) }).toEqual({ code: 0, stderr: '', sha256: sha256(stdout) });
      // Following it waits while the host expects its executor back (its state remembers the session):
      // it writes the whole log, then stays. A new executor under the same id has no such session: the
      // process is lost with why, and the follower ends there (failed PROCESS_GONE, exit 1).
      const followed = startCli(['logs', '--environment', ENV, processId, '--follow'], { ...process.env, EXEC_RX_TOKEN: TOKEN, EXEC_RX_HOST: second.base });
      followed.child.stdin.end();
      // Once it follows (its first line out), the executor comes back: the host settles the take-back at
      // once, however long the follower takes to write the whole log (a clean-clone run under load took
      // longer than the host's 90 s take-back wait to write it, and the follower ended "how it ended is unknown").
      await followed.waitFor('stdout', '1\n');
      expect(followed.child.exitCode).toBeNull();
      const fresh = await startDirectExecutor({ remoteUrl: second.base, environmentId: ENV, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
      try {
        expect(await followed.done).toEqual({ code: 1, signal: null });
        await second.run.waitFor('stderr', ' lost: ');
        // The host's stderr is JSON lines (not a terminal): the lost process's line, by its msg.
        const messages = second.run.stderr.map((c) => c.text).join('').split('\n').filter((line) => line !== '').map((line) => String((JSON.parse(line) as { msg?: unknown }).msg));
        const lostReason = messages.map((msg) => /^environment \S+: process \S+ lost: (.*)$/.exec(msg)?.[1]).find((reason) => reason !== undefined);
        expect(lostReason).toMatch(/^the executor no longer has session \S+ \(its 80 s retention passed\)/);
        expect({ stderr: followed.stderr.map((c) => c.text).join(''), sha256: sha256(followed.stdout.map((c) => c.text).join('')) }).toEqual({
          stderr: `exec-rx: the host at ${second.base} no longer knows the process (it restarted): it was running when the host stopped and could not be taken back: ${lostReason ?? ''}\n`,
          sha256: sha256(stdout),
        });
      } finally {
        await fresh.stop();
      }
      const bytes = await api.get(`${paths.process(ENV, processId)}/log`);
      expect({ status: bytes.status, sha256: sha256(bytes.text) }).toEqual({ status: 200, sha256: sha256(stdout) });
    } finally {
      second.run.child.kill('SIGTERM');
      await second.run.done;
    }
  });
});
