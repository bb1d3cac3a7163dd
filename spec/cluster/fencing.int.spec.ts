/**
 * Issue 33, a replica that comes back late cannot corrupt anything. The executor dials a TCP proxy of the
 * spec's own in front of HAProxy (so one socket can be cut). The owner replica is SIGSTOPped, the
 * executor's socket cut at the proxy; it re-dials, lands on the other replica, which adopts it at a newer
 * epoch. Then the stopped replica is SIGCONTed: its writes for the environment are refused as stale and
 * counted (`exec_rx_stale_writes_total`, read from its metrics), it lets the environment go, and nothing
 * changes: the owner and epoch in Redis stay the new owner's, the session too, no process is terminated,
 * and the log reads the same bytes (sha256) before and after; the process ends with all of it.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import Redis from 'ioredis';
import { ownerKey, sessionKey } from '../../src/store/redis/redis-keys';
import { RedisStateStore } from '../../src/store/redis/redis-state-store';
import { ApiClient, paths } from '../host/api/api-client';
import { within } from '../host/api/sse-reader';
import type { SseEvent } from '../host/api/sse-reader';
import { outputOf } from '../cli/host-child';
import { startDirectExecutor } from '../support/executor';
import type { SpecHaproxy as Haproxy } from '../support/haproxy';
import { startHaproxy } from '../support/haproxy';
import type { DisconnectableProxy } from '../support/ws-proxy';
import { startDisconnectableProxy } from '../support/ws-proxy';
import type { Replica } from './replicas';
import { replicaCluster } from './replicas';

jest.setTimeout(180_000);

const CREDENTIALS = { keyId: 'AKIDREPLICAFENCE', secret: 'replica-fence-secret-do-not-print', token: 'replica-fence-token-do-not-print' };
const ENV = 'fenced-1';
const TICKS = 400;
/** 400 numbered lines, twenty a second (20 s), reading nothing from its stdin pipe. */
const SCRIPT = `echo pid $$; i=1; while [ $i -le ${TICKS} ]; do echo "tick $i"; i=$((i+1)); sleep 0.05; done`;
const sha256 = (text: string): string => createHash('sha256').update(text, 'latin1').digest('hex');

/** Every output event the replica's log holds now, up to `lastSeq` (a stream read to that seq, then closed). */
async function logUpTo(api: ApiClient, processId: string, lastSeq: number): Promise<{ text: string; seqs: number[] }> {
  const opened = await api.events(paths.events(ENV, processId));
  if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}`);
  await opened.stream.next((event: SseEvent) => Number(event.id ?? '0') >= lastSeq, 30_000);
  await opened.stream.close();
  const got = outputOf(opened.stream.events.filter((event) => Number(event.id ?? '0') <= lastSeq));
  return { text: got.text, seqs: got.seqs };
}

describe('a replica SIGSTOPped while another adopts its executor, then SIGCONTed', () => {
  let balancer: Haproxy | undefined;
  let cut: DisconnectableProxy | undefined;
  let redis: Redis | undefined;
  // Before the cluster's afterAll stops redis-server (hooks run in the order declared): a client whose
  // server went away first waits to reconnect, and its timer outlives disconnect() (the leak check's Timeout).
  afterAll(async () => {
    redis?.disconnect();
    await cut?.close();
    await balancer?.stop();
  });
  const cluster = replicaCluster('replica-fence', CREDENTIALS);

  it("is fenced: its stale writes are refused and counted, and nothing of the new owner's changes", async () => {
    const a = await cluster.start('a');
    const b = await cluster.start('b');
    balancer = await startHaproxy({ backends: [{ name: 'a', port: a.port }, { name: 'b', port: b.port }], healthPath: '/readyz' });
    cut = await startDisconnectableProxy(balancer.port);
    redis = new Redis(cluster.redis().url);
    const executor = await startDirectExecutor({ remoteUrl: `http://127.0.0.1:${cut.port}`, environmentId: ENV, credentials: { accessKeyId: CREDENTIALS.keyId, secretAccessKey: CREDENTIALS.secret } });
    let stopped: Replica | undefined;
    try {
      const line = `environment ${ENV} generation 1: connected`;
      const owner = await within(Promise.race([a, b].map(async (replica) => (await replica.run.waitFor('stderr', line), replica))), 30_000, line);
      const other = owner === a ? b : a;
      const onOwner = new ApiClient(owner.base, CREDENTIALS.token);
      const started = await onOwner.post(paths.processes(ENV), { argv: ['sh', '-c', SCRIPT], pipeStdin: true });
      expect(started.status).toBe(201);
      const processId = (started.body as { id: string }).id;
      expect((await onOwner.post(paths.stdin(ENV, processId), { writeId: 'w-1', data: Buffer.from('kept\n').toString('base64') })).status).toBe(200);
      const state = await RedisStateStore.open({ redis, prefix: 'exec-rx' });
      const stdinBefore = await state.stdin({ environmentId: ENV, processId });
      const early = await logUpTo(onOwner, processId, 20);
      const pid = Number(/^pid (\d+)\n/.exec(early.text)?.[1]);
      const epochBefore = Number(await redis.hget(ownerKey('exec-rx', ENV), 'epoch'));

      owner.run.child.kill('SIGSTOP');
      stopped = owner;
      cut.pause();
      cut.resume();
      await other.run.waitFor('stderr', `environment ${ENV}: session `);
      expect(cluster.stderr(other)).toMatch(new RegExp(`environment ${ENV}: session \\S+ taken back: 1 process adopted, 0 lost`));
      const adopted = await redis.hgetall(ownerKey('exec-rx', ENV));
      expect(Number(adopted['epoch'])).toBeGreaterThan(epochBefore);
      const session = await redis.hgetall(sessionKey('exec-rx', ENV));
      const onOther = new ApiClient(other.base, CREDENTIALS.token);
      const before = await logUpTo(onOther, processId, 60);

      owner.run.child.kill('SIGCONT');
      stopped = undefined;
      await within(owner.run.waitFor('stderr', `environment ${ENV}: let go at epoch ${epochBefore}`), 30_000, 'the late replica lets go');
      expect(await cluster.metric(owner, 'exec_rx_host_stale_writes_total')).toBeGreaterThan(0);
      expect(await cluster.metric(owner, 'exec_rx_host_fenced_total')).toBe(1);
      // Nothing of the new owner's changed.
      expect(await redis.hgetall(ownerKey('exec-rx', ENV))).toEqual(adopted);
      expect(await redis.hgetall(sessionKey('exec-rx', ENV))).toEqual(session);
      expect(existsSync(`/proc/${pid}`)).toBe(true);
      const listed = await onOther.get(paths.process(ENV, processId));
      expect(listed.body).toMatchObject({ id: processId, state: 'running' });
      // The late replica answers for it no more: the call is the owner's.
      const late = await new ApiClient(owner.base, CREDENTIALS.token).post(paths.stdin(ENV, processId), { writeId: 'w-late', data: Buffer.from('late\n').toString('base64') });
      expect({ status: late.status, code: (late.body as { code?: string }).code }).toEqual({ status: 503, code: 'ENVIRONMENT_ELSEWHERE' });
      const after = await logUpTo(onOther, processId, 60);
      expect(sha256(after.text)).toBe(sha256(before.text));
      // The new owner's stdin goes on after the ids the old one reserved: none is reused for new bytes.
      expect((await onOther.post(paths.stdin(ENV, processId), { writeId: 'w-2', data: Buffer.from('more\n').toString('base64') })).status).toBe(200);
      const stdinAfter = await state.stdin({ environmentId: ENV, processId });
      const first = stdinBefore?.writes.find((write) => write.writeId === 'w-1');
      const second = stdinAfter?.writes.find((write) => write.writeId === 'w-2');
      expect(first).toBeDefined();
      expect(second?.firstWriteId).toBeGreaterThanOrEqual((first?.firstWriteId ?? 0) + (first?.count ?? 0));
      expect(stdinAfter?.nextWriteId).toBeGreaterThan(stdinBefore?.nextWriteId ?? 0);
      await state.close();

      const opened = await onOther.events(paths.events(ENV, processId));
      if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}`);
      const whole = outputOf(await opened.stream.ended(60_000));
      expect(whole.others).toEqual(['exited', 'closed']);
      expect(whole.seqs.every((seq, index) => seq === index + 1)).toBe(true);
      const want = `pid ${pid}\n${Array.from({ length: TICKS }, (_v, i) => `tick ${i + 1}\n`).join('')}`;
      expect({ bytes: whole.text.length, sha256: sha256(whole.text) }).toEqual({ bytes: want.length, sha256: sha256(want) });
      expect(executor.child.exitCode).toBeNull();
    } finally {
      if (stopped !== undefined) stopped.run.child.kill('SIGCONT');
      await executor.stop();
    }
  });
});
