/**
 * Replicas of `exec-rx host --redis-url-file` (the built cli) on one real redis-server started by the spec,
 * each on its own data dir (its lock and port), with the metrics port on: what the replica specs start,
 * SIGKILL, SIGSTOP and drain. Call {@link replicaCluster} inside a `describe`: it registers the work dir and
 * the redis-server in `beforeAll`/`afterAll`, and stops every replica it started in `afterAll`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { within } from '../host/api/sse-reader';
import type { CliRun } from '../cli/cli-process';
import { killIfRunning, startCli } from '../cli/cli-process';
import type { RedisServerOptions, SpecRedis } from '../support/redis-server';
import { startRedisServer } from '../support/redis-server';
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';
import { startDirectExecutor } from '../support/executor';
import type { SpecHaproxy } from '../support/haproxy';
import { startHaproxy } from '../support/haproxy';

/** One running replica. */
export interface Replica {
  readonly name: string;
  readonly run: CliRun;
  /** Its own base url (`http://127.0.0.1:PORT`). */
  readonly base: string;
  /** Its own port. */
  readonly port: number;
  /** Its Prometheus endpoint. */
  readonly metricsUrl: string;
  /** Its preview listener's base url, when started with `--preview-port`. */
  readonly previewUrl: string | undefined;
}

/** The credentials every replica accepts. */
export interface ReplicaCredentials {
  readonly keyId: string;
  readonly secret: string;
  readonly token: string;
}

/** A spec's cluster (see the module's doc). */
export interface ReplicaCluster {
  /** The redis-server (started in `beforeAll`). */
  readonly redis: () => SpecRedis;
  /** Starts replica `name` (its data dir `<work>/<name>`) with `args`; resolves once it printed its url. */
  start(name: string, args?: readonly string[]): Promise<Replica>;
  /** Everything `replica` wrote to stderr so far. */
  stderr(replica: Replica): string;
  /** A metric's value (summed over its label sets matching `labels`), as the replica's /metrics says. */
  metric(replica: Replica, name: string, labels?: Readonly<Record<string, string>>): Promise<number>;
}

/** A cluster of replicas for one spec file (see the module's doc). */
export function replicaCluster(prefix: string, credentials: ReplicaCredentials, redisOptions: RedisServerOptions = {}): ReplicaCluster {
  let work: string | undefined;
  let redis: SpecRedis | undefined;
  const started: Replica[] = [];
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), `exec-rx-${prefix}-`));
    redis = await startRedisServer(redisOptions);
  });
  afterAll(async () => {
    await Promise.all(started.map((replica) => killIfRunning(replica.run.child)));
    await redis?.stop();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });
  const workDir = (): string => {
    if (work === undefined) throw new Error('the work dir exists only while the spec runs');
    return work;
  };
  const specRedis = (): SpecRedis => {
    if (redis === undefined) throw new Error('redis-server runs only while the spec runs');
    return redis;
  };
  return {
    redis: specRedis,
    start: async (name, args = []) => {
      const urlFile = join(workDir(), 'redis-url');
      writeFileSync(urlFile, `${specRedis().url}\n`, { mode: 0o600 });
      const env = {
        ...process.env,
        XDG_STATE_HOME: workDir(),
        EXEC_RX_ACCESS_KEY_ID: credentials.keyId,
        EXEC_RX_SECRET_ACCESS_KEY: credentials.secret,
        EXEC_RX_OPERATOR_TOKEN: credentials.token,
      };
      const run = startCli(['host', '--port', '0', '--metrics-port', '0', '--data-dir', join(workDir(), name), '--redis-url-file', urlFile, ...args], env);
      await within(run.waitFor('stdout', '--environment-id <environment-id>\n'), 20_000, `replica ${name} listening`);
      const printed = run.stdout.map((c) => c.text).join('');
      const base = /^exec-rx host listening on (\S+)$/m.exec(printed)?.[1];
      const metricsUrl = /^Prometheus metrics: (\S+)$/m.exec(printed)?.[1];
      if (base === undefined || metricsUrl === undefined) throw new Error(`replica ${name} printed no url: ${printed}`);
      const previewUrl = /^previews: (\S+)\/ENVIRONMENT\/PORT\/$/m.exec(printed)?.[1];
      const replica = { name, run, base, port: Number(new URL(base).port), metricsUrl, previewUrl };
      started.push(replica);
      return replica;
    },
    stderr: (replica) => replica.run.stderr.map((c) => c.text).join(''),
    metric: async (replica, name, labels = {}) => {
      const text = await (await fetch(replica.metricsUrl)).text();
      let sum = 0;
      for (const line of text.split('\n')) {
        const match = /^(\w+)(\{[^}]*\})? (\S+)$/.exec(line);
        if (match?.[1] !== name) continue;
        const set = match[2] ?? '';
        if (Object.entries(labels).every(([key, value]) => set.includes(`${key}="${value}"`))) sum += Number(match[3]);
      }
      return sum;
    },
  };
}

/** The replica whose stderr says `line` first (each is watched; the others' waits are dropped); rejects after `timeoutMs`. */
export async function whichSays(replicas: readonly Replica[], line: string, timeoutMs: number): Promise<Replica> {
  return within(Promise.race(replicas.map(async (replica) => (await replica.run.waitFor('stderr', line), replica))), timeoutMs, line);
}

/** Two replicas behind HAProxy and an executor dialling the balancer (see {@link balancedPair}). */
export interface BalancedPair {
  readonly a: Replica;
  readonly b: Replica;
  /** The replica the executor's first socket landed on. */
  readonly owner: Replica;
  readonly other: Replica;
  readonly balancer: SpecHaproxy;
  readonly executor: SpawnedExecutor;
}

/**
 * Starts replicas `a` and `b` of `cluster`, HAProxy in front of them on the README's configuration, and a
 * direct-mode executor of `environmentId` dialling the balancer; resolves once a replica says the
 * environment is connected (the `owner`). Rejects, having stopped the executor and the balancer, when none
 * does within 30 s. The caller stops the executor and the balancer; the cluster stops the replicas.
 */
export async function balancedPair(cluster: ReplicaCluster, credentials: ReplicaCredentials, environmentId: string): Promise<BalancedPair> {
  const a = await cluster.start('a');
  const b = await cluster.start('b');
  const balancer = await startHaproxy({ backends: [{ name: 'a', port: a.port }, { name: 'b', port: b.port }], healthPath: '/readyz' });
  const executor = await startDirectExecutor({ remoteUrl: balancer.url, environmentId, credentials: { accessKeyId: credentials.keyId, secretAccessKey: credentials.secret } });
  try {
    const owner = await whichSays([a, b], `environment ${environmentId} generation 1: connected`, 30_000);
    return { a, b, owner, other: owner === a ? b : a, balancer, executor };
  } catch (error: unknown) {
    await executor.stop();
    await balancer.stop();
    throw error;
  }
}
