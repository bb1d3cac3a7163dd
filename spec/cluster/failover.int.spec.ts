/**
 * Issue 33, a replica's crash loses nothing: two `exec-rx host` replicas on one real redis-server behind a
 * real HAProxy running the README's configuration (docs/haproxy.cfg). One executor dials the balancer and
 * streams 10 MiB at 256 KiB/s; the replica that owns it is SIGKILLed mid-stream. The executor re-dials the
 * balancer, lands on the other replica and is adopted by owner and epoch (its session taken back, no 409,
 * no exit); its process never dies. A subscriber that was on the dead replica and moves to the other, and
 * one on the other from the start (served from the Redis log), both get the output sha256-exact with
 * contiguous seqs.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { ApiClient, paths } from '../host/api/api-client';
import { outputOf } from '../cli/host-child';
import type { SpecHaproxy as Haproxy } from '../support/haproxy';
import { balancedPair, replicaCluster } from './replicas';

jest.setTimeout(180_000);

const CREDENTIALS = { keyId: 'AKIDREPLICAFAILOVER', secret: 'replica-failover-secret-do-not-print', token: 'replica-failover-token-do-not-print' };
const ENV = 'failover-1';
/** 160 chunks of 64 KiB, four a second: 10 MiB at 256 KiB/s, after a line with the shell's pid. */
const CHUNKS = 160;
const SCRIPT = `echo pid $$; i=0; while [ $i -lt ${CHUNKS} ]; do printf '%065535d\\n' $i; i=$((i+1)); sleep 0.25; done`;
const sha256 = (data: string): string => createHash('sha256').update(data, 'latin1').digest('hex');
const expected = (pid: number): string => `pid ${pid}\n${Array.from({ length: CHUNKS }, (_v, i) => `${String(i).padStart(65535, '0')}\n`).join('')}`;

describe('two replicas on Redis behind HAProxy: the owner SIGKILLed mid-stream', () => {
  const cluster = replicaCluster('replica-failover', CREDENTIALS);
  let balancer: Haproxy | undefined;
  afterAll(async () => balancer?.stop());

  it('the executor lands on the other replica and is adopted; both subscribers get every byte once, in order; the process never dies', async () => {
    const { owner, other, executor, ...pair } = await balancedPair(cluster, CREDENTIALS, ENV);
    balancer = pair.balancer;
    try {
      const onOwner = new ApiClient(owner.base, CREDENTIALS.token);
      const onOther = new ApiClient(other.base, CREDENTIALS.token);
      const started = await onOwner.post(paths.processes(ENV), { argv: ['sh', '-c', SCRIPT] });
      expect(started.status).toBe(201);
      const processId = (started.body as { id: string }).id;
      // Every replica names the cluster as the instance, and itself as the replica.
      const listedOnOther = await onOther.get(paths.process(ENV, processId));
      expect(listedOnOther.headers['exec-rx-host-instance']).toBe(started.headers['exec-rx-host-instance']);
      expect(listedOnOther.headers['exec-rx-host-replica']).not.toBe(started.headers['exec-rx-host-replica']);
      expect(listedOnOther.body).toMatchObject({ id: processId, state: 'running' });

      const first = await onOwner.events(paths.events(ENV, processId));
      const fromTheStart = await onOther.events(paths.events(ENV, processId));
      if (!('stream' in first) || !('stream' in fromTheStart)) throw new Error('an event stream was refused');
      await first.stream.next((event) => event.event === 'output' && Number(event.id ?? '0') >= 8, 30_000);
      const pid = Number(/^pid (\d+)\n/.exec(outputOf(first.stream.events).text)?.[1]);
      expect(existsSync(`/proc/${pid}`)).toBe(true);

      owner.run.child.kill('SIGKILL');
      expect(await owner.run.done).toEqual({ code: null, signal: 'SIGKILL' });
      await first.stream.close();
      const before = outputOf(first.stream.events);

      await other.run.waitFor('stderr', `environment ${ENV}: session `);
      expect(cluster.stderr(other)).toMatch(new RegExp(`environment ${ENV}: session \\S+ taken back: 1 process adopted, 0 lost`));
      expect(existsSync(`/proc/${pid}`)).toBe(true);
      const lastSeq = before.seqs[before.seqs.length - 1] ?? 0;
      const moved = await onOther.events(paths.events(ENV, processId), { headers: { 'last-event-id': String(lastSeq) } });
      if (!('stream' in moved)) throw new Error(`events answered ${moved.refused.status}: ${moved.refused.text}`);
      const rest = outputOf(await moved.stream.ended(150_000));
      const whole = outputOf(await fromTheStart.stream.ended(150_000));

      expect(rest.others).toEqual(['exited', 'closed']);
      expect(whole.others).toEqual(['exited', 'closed']);
      const seqs = [...before.seqs, ...rest.seqs];
      expect(seqs.every((seq, index) => seq === index + 1)).toBe(true);
      expect(whole.seqs.every((seq, index) => seq === index + 1)).toBe(true);
      const want = { bytes: expected(pid).length, sha256: sha256(expected(pid)) };
      expect({ bytes: before.text.length + rest.text.length, sha256: sha256(before.text + rest.text) }).toEqual(want);
      expect({ bytes: whole.text.length, sha256: sha256(whole.text) }).toEqual(want);
      const done = await onOther.get(paths.process(ENV, processId));
      expect(done.body).toMatchObject({ state: 'closed', exitCode: 0 });
      // The executor never exited: no 401, no 4xx, no failed registration.
      expect(executor.child.exitCode).toBeNull();
    } finally {
      await executor.stop();
    }
  });
});
