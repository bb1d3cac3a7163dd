/**
 * Issue 38 (found by the nemesis, seed 562): Redis restarted empty loses the stdin records of running
 * processes with the rest of its data. The owner writes back what it holds, its environments, registrations,
 * logs, and the operator API's stdin records too: when it is SIGKILLed afterwards, the replica that takes
 * the executor back takes the command's stdin feeder back with it, and a write and the end through it go
 * through (before, the feeder was adopted as a process of its own and the command's stdin answered
 * 409 STDIN_CLOSED for good, the command waiting for ever). Two replicas behind HAProxy, one executor.
 */
import Redis from 'ioredis';
import { stdinKey } from '../../src/store/redis/redis-keys';
import { ApiClient, paths } from '../host/api/api-client';
import { b64, decodeEvents } from '../host/api/api-host';
import { within } from '../host/api/sse-reader';
import type { SpecHaproxy as Haproxy } from '../support/haproxy';
import { balancedPair, replicaCluster } from './replicas';

jest.setTimeout(120_000);

const CREDENTIALS = { keyId: 'AKIDSTDINLOSS', secret: 'stdin-loss-secret-do-not-print', token: 'stdin-loss-token-do-not-print' };
const ENV = 'stdin-loss-1';
const SCRIPT = 'while IFS= read -r line; do echo "<$line>"; done; echo EOF; exit 0';
describe('Redis restarted empty under a process reading its stdin, then its owner SIGKILLed', () => {
  const cluster = replicaCluster('stdin-loss', CREDENTIALS);
  let balancer: Haproxy | undefined;
  afterAll(async () => balancer?.stop());

  it('the owner writes the stdin record back; the replica that takes the executor back takes the feeder with it, and later writes and the end go through', async () => {
    const { a, b, owner, other, executor, ...pair } = await balancedPair(cluster, CREDENTIALS, ENV);
    balancer = pair.balancer;
    try {
      const onOwner = new ApiClient(owner.base, CREDENTIALS.token);
      const started = await onOwner.post(paths.processes(ENV), { argv: ['sh', '-c', SCRIPT], pipeStdin: true });
      expect(started.status).toBe(201);
      const processId = (started.body as { id: string }).id;
      expect(await onOwner.post(paths.stdin(ENV, processId), { writeId: 'w1', data: b64('a\n') })).toMatchObject({ status: 200 });

      const redis = new Redis(cluster.redis().url, { maxRetriesPerRequest: null });
      try {
        expect(await redis.exists(stdinKey('exec-rx', ENV, processId))).toBe(1);
        await cluster.redis().restart({ empty: true });
        await within(owner.run.waitFor('stderr', 'rewrote the 1 environment(s) this replica owns'), 30_000, 'the owner rewrites');
        expect(cluster.stderr(owner)).toMatch(/rewrote the 1 environment\(s\) this replica owns into the shared store, \d+ log\(s\) and 1 stdin record\(s\)/);
        expect(JSON.parse((await redis.get(stdinKey('exec-rx', ENV, processId))) ?? '{}')).toMatchObject({ target: 'fifo', writes: [{ writeId: 'w1' }] });
      } finally {
        redis.disconnect();
      }

      owner.run.child.kill('SIGKILL');
      expect(await owner.run.done).toEqual({ code: null, signal: 'SIGKILL' });
      await other.run.waitFor('stderr', `environment ${ENV}: session `);
      // The feeder is taken back with its command, and not counted as a process of its own.
      expect(cluster.stderr(other)).toMatch(new RegExp(`environment ${ENV}: session \\S+ taken back: 1 process adopted, 0 lost`));

      const onOther = new ApiClient(other.base, CREDENTIALS.token);
      expect(await onOther.post(paths.stdin(ENV, processId), { writeId: 'w2', data: b64('b\n') })).toMatchObject({ status: 200 });
      expect(await onOther.post(paths.stdinEnd(ENV, processId))).toMatchObject({ status: 200, body: { status: 'ended' } });
      const all = await onOther.events(paths.events(ENV, processId));
      if (!('stream' in all)) throw new Error(`events answered ${all.refused.status}: ${all.refused.text}`);
      const events = await all.stream.ended(60_000);
      expect(decodeEvents(events).stdout.endsWith('<b>\nEOF\n')).toBe(true);
      expect(JSON.parse(events.find((event) => event.event === 'exited')?.data ?? '{}')).toMatchObject({ exitCode: 0 });
      expect(executor.child.exitCode).toBeNull();
    } catch (error: unknown) {
      process.stderr.write(`--- a\n${cluster.stderr(a).slice(-6000)}\n--- b\n${cluster.stderr(b).slice(-6000)}\n`);
      throw error;
    } finally {
      await executor.stop();
    }
  });
});
