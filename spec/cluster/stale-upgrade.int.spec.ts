/**
 * Issue 38, the sequence a partition made: a stale upgrade never takes an environment back. Two replicas,
 * each behind a fault proxy of the suite's own (bench/nemesis/fault-proxy.ts), and a retargetable proxy as
 * the balancer the executor dials. A paced process writes 3 MiB. The owner is SIGSTOPped and its proxy
 * set to hold new connections; the executor's socket is cut at the balancer, so it re-dials: its upgrade
 * reaches the stopped owner's proxy and is held there (as it waited in the stopped process's accept
 * queue). The balancer then sends new connections to the other replica: the executor gives up on the held
 * upgrade and dials again, and the other replica adopts it. Then the stopped replica is SIGCONTed and the
 * held upgrade let through, its connection kept open with nobody at the executor's end of it.
 *
 * What must hold: the stale upgrade claims nothing (the owner and epoch in Redis stay the adopter's, which
 * never lets go), the process's whole output arrives exactly once and in order on either replica, it ends
 * `closed` with its exit code, every take-back accounts for its processes, and the executor never exits.
 */
import { createHash } from 'node:crypto';
import Redis from 'ioredis';
import type { FaultProxy } from '../../bench/nemesis/fault-proxy';
import { startFaultProxy } from '../../bench/nemesis/fault-proxy';
import { ownerKey } from '../../src/store/redis/redis-keys';
import { outputOf } from '../cli/host-child';
import { ApiClient, paths } from '../host/api/api-client';
import { within } from '../host/api/sse-reader';
import { startDirectExecutor } from '../support/executor';
import type { Replica } from './replicas';
import { replicaCluster } from './replicas';

jest.setTimeout(240_000);

const CREDENTIALS = { keyId: 'AKIDREPLICASTALE', secret: 'replica-stale-secret-do-not-print', token: 'replica-stale-token-do-not-print' };
const ENV = 'stale-1';
/** 3 MiB in 3,072 lines of 1 KiB, about 41 KiB/s (75 s): an outage of 15 s stays well inside the executor's 1 MiB window. */
const LINES = 3_072;
const SCRIPT = [
  'import sys, time',
  `for i in range(${LINES}):`,
  "    sys.stdout.write(('%06d ' % i).ljust(1023, 'x') + '\\n')",
  '    sys.stdout.flush()',
  '    time.sleep(0.0244)',
  'sys.exit(3)',
].join('\n');
const WANT = Array.from({ length: LINES }, (_v, i) => `${`${String(i).padStart(6, '0')} `.padEnd(1023, 'x')}\n`).join('');
const sha256 = (text: string): string => createHash('sha256').update(text, 'latin1').digest('hex');

describe('a stale upgrade held while its replica was stopped, let through after another replica adopted', () => {
  const proxies: FaultProxy[] = [];
  let redis: Redis | undefined;
  let stopped: Replica | undefined;
  // Before the cluster's afterAll stops redis-server (hooks run in the order declared): a client whose
  // server went away first waits to reconnect, and its timer outlives disconnect() (the leak check's Timeout).
  afterAll(async () => {
    if (stopped !== undefined) stopped.run.child.kill('SIGCONT');
    redis?.disconnect();
    for (const proxy of proxies) await proxy.close();
  });
  const cluster = replicaCluster('replica-stale', CREDENTIALS);

  it('claims nothing: the adopter keeps the environment and every byte arrives once, in order', async () => {
    const a = await cluster.start('a');
    const b = await cluster.start('b');
    const front = new Map<Replica, FaultProxy>();
    for (const replica of [a, b]) {
      const proxy = await startFaultProxy(replica.port);
      proxies.push(proxy);
      front.set(replica, proxy);
    }
    const proxyOf = (replica: Replica): FaultProxy => {
      const proxy = front.get(replica);
      if (proxy === undefined) throw new Error(`no proxy in front of ${replica.name}`);
      return proxy;
    };
    // The balancer: one address, whose target the spec moves.
    const balancer = await startFaultProxy(proxyOf(a).port);
    proxies.push(balancer);
    redis = new Redis(cluster.redis().url);
    const executor = await startDirectExecutor({
      remoteUrl: `http://127.0.0.1:${balancer.port}`,
      environmentId: ENV,
      credentials: { accessKeyId: CREDENTIALS.keyId, secretAccessKey: CREDENTIALS.secret },
    });
    try {
      await within(a.run.waitFor('stderr', `environment ${ENV} generation 1: connected`), 30_000, 'a connected');
      const onA = new ApiClient(a.base, CREDENTIALS.token);
      const started = await onA.post(paths.processes(ENV), { argv: ['python3', '-c', SCRIPT] });
      expect(started.status).toBe(201);
      const processId = (started.body as { id: string }).id;
      // a holds some of it before it stops.
      const early = await onA.events(paths.events(ENV, processId));
      if (!('stream' in early)) throw new Error(`events answered ${early.refused.status}`);
      await early.stream.next((event) => Number(event.id ?? '0') >= 100, 30_000);
      await early.stream.close();

      // a stops with its executor; its proxy holds whatever comes next; the executor's socket is cut.
      a.run.child.kill('SIGSTOP');
      stopped = a;
      proxyOf(a).hold(600_000, 'keep');
      balancer.cut();
      await proxyOf(a).until((counts) => counts.held >= 1, 30_000, "the executor's re-dial held at a");
      balancer.retarget(proxyOf(b).port);
      await within(b.run.waitFor('stderr', `environment ${ENV}: session `), 60_000, 'b takes the session back');
      expect(cluster.stderr(b)).toMatch(new RegExp(`environment ${ENV}: session \\S+ taken back: 1 process adopted, 0 lost`));
      const adopted = await redis.hgetall(ownerKey('exec-rx', ENV));

      // a comes back and gets the upgrade that waited for it, whose executor is long gone.
      const resumedAt = cluster.stderr(a).length;
      a.run.child.kill('SIGCONT');
      stopped = undefined;
      proxyOf(a).heal();
      proxyOf(a).release();
      await within(a.run.waitFor('stderr', `environment ${ENV}: let go`, resumedAt), 30_000, 'a lets go of its generation');
      // The held upgrade starts a generation here, which ends without a claim (its executor never answers).
      await within(a.run.waitFor('stderr', new RegExp(`environment ${ENV} generation \\d+: starting`), resumedAt), 30_000, 'a takes the stale upgrade');
      // It ends unclaimed either way: failed (its initialize times out), or let go at epoch 0 (a's renewal
      // round, finding b's lease, drops every generation a holds of it; a clean-clone CI run saw this).
      // Failing, it says what a did meanwhile (its log since SIGCONT) and what the proxies counted.
      const unclaimed = new RegExp(`environment ${ENV}(?: generation \\d+: failed|: let go at epoch 0 )`);
      await within(a.run.waitFor('stderr', unclaimed, resumedAt), 40_000, 'the stale upgrade goes nowhere').catch((error: unknown) => {
        const counts = JSON.stringify({ a: proxyOf(a).counts, b: proxyOf(b).counts, balancer: balancer.counts });
        throw new Error(`${String(error)}; proxies ${counts}; a since SIGCONT:\n${cluster.stderr(a).slice(resumedAt)}`);
      });

      // Nothing of b's changed: it owns the environment at its epoch, and never let go.
      expect(await redis.hgetall(ownerKey('exec-rx', ENV))).toEqual(adopted);
      expect(cluster.stderr(b)).not.toMatch(new RegExp(`environment ${ENV}: let go`));

      // The whole output, once and in order, from b and from a; it ends closed with its exit code.
      const onB = new ApiClient(b.base, CREDENTIALS.token);
      for (const api of [onB, onA]) {
        const opened = await api.events(paths.events(ENV, processId));
        if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}`);
        const whole = outputOf(await opened.stream.ended(150_000));
        expect(whole.others).toEqual(['exited', 'closed']);
        expect(whole.seqs.every((seq, index) => seq === index + 1)).toBe(true);
        expect({ bytes: whole.text.length, sha256: sha256(whole.text) }).toEqual({ bytes: WANT.length, sha256: sha256(WANT) });
      }
      const listed = await onB.get(paths.process(ENV, processId));
      expect(listed.body).toMatchObject({ id: processId, state: 'closed', exitCode: 3 });
      for (const replica of [a, b]) expect(await cluster.metric(replica, 'exec_rx_host_take_back_unaccounted_total')).toBe(0);
      expect(executor.child.exitCode).toBeNull();
    } catch (error: unknown) {
      const lines = (replica: Replica): string => cluster.stderr(replica).split('\n').filter((line) => line.includes(ENV)).join('\n');
      process.stderr.write(`--- a\n${lines(a)}\n--- b\n${lines(b)}\n`);
      throw error;
    } finally {
      await executor.stop();
    }
  });
});
