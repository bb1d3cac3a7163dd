/**
 * 14. Replicas on Redis (issue 33), `--only=replicas`: the built `exec-rx host` as child processes, a real
 * redis-server and a real HAProxy running the README's configuration (`lib/replica-procs.ts`), codex
 * executors in direct mode. Five figures:
 * 1. **Redis log vs disk log**, paired turns in one run (order rotating, a second disk turn as the control
 *    pair): a single host (`--data-dir`, its output log on disk) and a replica (`--redis-url-file`), each
 *    with one direct executor; a process writes 100 MB of zeros once its reader is connected, read to its
 *    end by one reader through the binary event stream (`application/vnd.exec-rx.events`, the readers
 *    child `sse-readers.ts`). MB/s of output from `go` to the reader's `closed`, ratio redis / disk (goal
 *    ≥ 0.5×); the CPU seconds of the host process, of redis-server and of the executor (with its
 *    processes) over the turn (`/proc`).
 * 2. **Failover**: two replicas + HAProxy + one executor dialling HAProxy, a process printing a line every
 *    20 ms; a reader on the other replica from the start, following by seq (SSE, reconnecting with
 *    Last-Event-ID when its stream ends). The owner is SIGKILLed; the time from the SIGKILL to the first
 *    output byte after the last seq the reader had, split by the other replica's log lines: the executor's
 *    re-dial landing there (`generation N: starting`), the take-back (`session … taken back`), and the
 *    first byte. Fresh cluster per turn.
 * 3. **Two replicas vs one**: 20 environments (20 executors, executor i dialling replica i mod n) × 100 processes of
 *    `echo x`, each environment's processes one after another on its owner (20 in flight, a token per
 *    environment: the API's 100 requests/s per token would bound it otherwise); processes per
 *    second over the whole batch and the p99 of start → `closed` (POST, then the SSE stream to `closed`).
 *    Fresh cluster per turn; the cores each part used.
 * 4. **Redis memory per retained MiB**: `INFO memory` `used_memory` before and after 16 processes each
 *    wrote 4 MiB of random bytes (64 MiB), per MiB of output.
 * 5. **Forwarding** (issue 39, `./replicas-forwarding`): start, stdin and terminate straight to the owner
 *    replica against straight to the non-owner (forwarded), median and p99 of each; a 100 MB stdin upload
 *    in 3 MiB writes, MB/s, the same two ways.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { spawnExecutor } from '../../src/executor/spawn-executor';
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { stopExecutor, trackExecutor } from '../lib/executors';
import { cpuMsOfTree, Readers } from '../lib/host-harness';
import { procCpu } from '../lib/proc-cpu';
import type { BenchHaproxy, BenchRedis, HostCredentials } from '../lib/replica-procs';
import { HostProc, redisUrlFile, startBenchHaproxy, startBenchRedis } from '../lib/replica-procs';
import type { Check, Row } from '../lib/report';
import { figure } from '../lib/report';
import type { Metrics } from '../lib/stats';
import { formatNumber, interleave, percentile, series, summarize } from '../lib/stats';
import { forwardingFigures } from './replicas-forwarding';

const MB = 1e6;
const MiB = 1024 * 1024;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const processesOf = (env: string): string => `/api/v1/environments/${env}/processes`;
/** The replicas' flags for a fleet of 20 executors (as `spec/cluster/fleet.int.spec.ts`: 2 handshakes per executor). */
const FLEET_LIMITS = ['--max-handshakes-per-second', '40', '--max-environments', '64'];

function newCredentials(): HostCredentials {
  return { accessKeyId: 'BENCHREPLICAS', secretAccessKey: randomBytes(24).toString('base64url'), token: randomBytes(24).toString('base64url') };
}

async function api(url: string, token: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

/** A direct executor for `environmentId` dialling `url`, tracked; resolves once `host` (or any of `hosts`) logged it connected, with that host. */
async function joinExecutor(url: string, environmentId: string, credentials: HostCredentials, hosts: readonly HostProc[]): Promise<{ readonly executor: SpawnedExecutor; readonly owner: HostProc }> {
  const executor = trackExecutor(await spawnExecutor({ mode: 'direct', remoteUrl: url, environmentId, credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey } }));
  try {
    return { executor, owner: await ownerOf(hosts, environmentId) };
  } catch (error: unknown) {
    await stopExecutor(executor);
    throw error;
  }
}

/** The host that logs `environmentId` connected first. */
async function ownerOf(hosts: readonly HostProc[], environmentId: string): Promise<HostProc> {
  const line = `environment ${environmentId} generation 1: connected`;
  const deadline = performance.now() + 60_000;
  for (;;) {
    const owner = hosts.find((host) => host.said(line) !== undefined);
    if (owner !== undefined) return owner;
    if (performance.now() > deadline) throw new Error(`no host said "${line}"`);
    await sleep(20);
  }
}

/** A work dir, removed by the returned function. */
function workDir(name: string): { readonly dir: string; readonly remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `exec-rx-bench-${name}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// ---------------------------------------------------------------------------------------------------
// 1. One 100 MB stream: the Redis log vs the disk log.

interface StreamSide {
  readonly host: HostProc;
  readonly url: string;
  readonly executor: SpawnedExecutor;
}

const STREAM_ENV = 'bench-replicas-stream';

async function streamTurn(side: StreamSide, credentials: HostCredentials, redis: BenchRedis, bytes: number): Promise<Metrics> {
  const processes = processesOf(STREAM_ENV);
  const started = await api(side.url, credentials.token, 'POST', processes, { argv: ['sh', '-c', `read go; head -c ${bytes} /dev/zero`], pipeStdin: true });
  const id = String(started['id']);
  const readers = new Readers(`${side.url}${processes}/${id}/events`, credentials.token, 1, true);
  try {
    await readers.next(); // opened
    const host0 = procCpu(side.host.pid).ownMs;
    const redis0 = procCpu(redis.pid).ownMs;
    const executor0 = cpuMsOfTree(side.executor.pid);
    const t0 = performance.now();
    readers.go();
    await api(side.url, credentials.token, 'POST', `${processes}/${id}/stdin`, { writeId: 'go', data: Buffer.from('go\n').toString('base64') });
    await api(side.url, credentials.token, 'POST', `${processes}/${id}/stdin/end`);
    const done = await readers.next();
    const wall = performance.now() - t0;
    const seconds = (done['ms'] ?? wall) / 1000;
    return {
      mbps: bytes / MB / seconds,
      hostCpuS: (procCpu(side.host.pid).ownMs - host0) / 1000,
      redisCpuS: (procCpu(redis.pid).ownMs - redis0) / 1000,
      executorCpuS: (cpuMsOfTree(side.executor.pid) - executor0) / 1000,
      readerCpuS: (done['cpuMs'] ?? 0) / 1000,
      // Bytes the reader got (binary frames included) per byte of output: below 1, output was lost (the Redis quota is 64 MiB per process).
      readPerByte: (done['bytes'] ?? 0) / bytes,
    };
  } finally {
    await readers.close();
    await api(side.url, credentials.token, 'DELETE', `${processes}/${id}`).catch(() => undefined);
  }
}

async function streamFigures(context: BenchContext): Promise<Row[]> {
  const bytes = sized(context, 100 * 1024 * 1024, 20 * 1024 * 1024);
  const runs = context.runs;
  context.log(`  1. one ${bytes / MiB} MiB stream, the Redis log vs the disk log: ${runs} paired runs + a warm-up`);
  const work = workDir('replicas-stream');
  const credentials = newCredentials();
  const redis = await startBenchRedis();
  const sides: StreamSide[] = [];
  try {
    const disk = new HostProc(['--data-dir', join(work.dir, 'disk'), '--log-total', '1GiB'], credentials, work.dir);
    const onRedis = new HostProc(['--data-dir', join(work.dir, 'replica'), '--redis-url-file', redisUrlFile(work.dir, redis.url)], credentials, work.dir);
    for (const host of [disk, onRedis]) {
      const url = await host.listening();
      const { executor } = await joinExecutor(url, STREAM_ENV, credentials, [host]);
      sides.push({ host, url, executor });
    }
    const [diskSide, redisSide] = sides as [StreamSide, StreamSide];
    const results = await interleave(
      {
        disk: () => streamTurn(diskSide, credentials, redis, bytes),
        redis: () => streamTurn(redisSide, credentials, redis, bytes),
        ctl: () => streamTurn(diskSide, credentials, redis, bytes),
      },
      { runs, between: context.settle, log: context.log },
    );
    const usedAfter = await redis.memory('used_memory');
    const cpu = (metric: string): string =>
      `disk ${formatNumber(summarize(series(results.disk, metric)).median)} s [${formatNumber(summarize(series(results.disk, metric)).min)}–${formatNumber(summarize(series(results.disk, metric)).max)}], redis ${formatNumber(summarize(series(results.redis, metric)).median)} s [${formatNumber(summarize(series(results.redis, metric)).min)}–${formatNumber(summarize(series(results.redis, metric)).max)}]`;
    const checks: Check[] = [
      { kind: 'check', suite: 'replicas', label: `CPU of the host process per ${bytes / MiB} MiB stream`, value: cpu('hostCpuS'), goal: 'reported', met: true },
      { kind: 'check', suite: 'replicas', label: `CPU of redis-server per ${bytes / MiB} MiB stream`, value: cpu('redisCpuS'), goal: 'reported', met: true },
      { kind: 'check', suite: 'replicas', label: `CPU of the executor (with its process) per ${bytes / MiB} MiB stream`, value: cpu('executorCpuS'), goal: 'reported', met: true },
      { kind: 'check', suite: 'replicas', label: `CPU of the reader (binary event stream) per ${bytes / MiB} MiB stream`, value: cpu('readerCpuS'), goal: 'reported', met: true },
    ];
    return [
      figure({
        suite: 'replicas',
        label: `one ${bytes / MiB} MiB stream to one binary reader: replica on Redis (exec-rx column) vs single host, log on disk (raw column)`,
        unit: 'MB/s',
        raw: series(results.disk, 'mbps'),
        rx: series(results.redis, 'mbps'),
        ctl: series(results.ctl, 'mbps'),
        ratioGoal: { min: 0.5 },
        note: `Redis used_memory after the runs: ${formatNumber(usedAfter / MiB)} MiB (each released process's stream stays until its keys expire, an hour; the per-process quota is 64 MiB)`,
      }),
      ...checks,
    ];
  } finally {
    await Promise.allSettled(sides.map((side) => stopExecutor(side.executor)));
    await Promise.allSettled(sides.map((side) => side.host.stop()));
    await redis.stop();
    work.remove();
  }
}

// ---------------------------------------------------------------------------------------------------
// 2. Failover.

/** An SSE reader that follows one process by seq, reconnecting with Last-Event-ID whenever its stream ends; the arrival time of every output seq. */
class SeqFollower {
  lastSeq = 0;
  private readonly arrivals: { readonly seq: number; readonly at: number }[] = [];
  private stopped = false;
  private current: (() => void) | undefined;

  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {
    void this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      await new Promise<void>((resolve) => {
        const req = request(this.url, { headers: { authorization: `Bearer ${this.token}`, accept: 'text/event-stream', ...(this.lastSeq > 0 ? { 'last-event-id': String(this.lastSeq) } : {}) }, agent: false }, (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            res.once('end', () => resolve());
            return;
          }
          let partial = '';
          res.setEncoding('utf8').on('data', (text: string) => {
            const at = performance.now();
            partial += text;
            const end = partial.lastIndexOf('\n\n');
            if (end < 0) return;
            const whole = partial.slice(0, end);
            partial = partial.slice(end + 2);
            for (const match of whole.matchAll(/id: (\d+)\nevent: output/g)) {
              const seq = Number(match[1]);
              if (seq > this.lastSeq) {
                this.lastSeq = seq;
                this.arrivals.push({ seq, at });
              }
            }
          });
          res.once('end', () => resolve());
          res.once('error', () => resolve());
        });
        this.current = () => req.destroy();
        req.once('error', () => resolve());
        req.once('close', () => resolve());
        req.end();
      });
      if (!this.stopped) await sleep(20);
    }
  }

  /** The arrival of the first output seq above `seq`. */
  async firstAfter(seq: number, timeoutMs = 60_000): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const found = this.arrivals.find((a) => a.seq > seq);
      if (found !== undefined) return found.at;
      if (performance.now() > deadline) throw new Error(`no output after seq ${seq} within ${timeoutMs} ms`);
      await sleep(5);
    }
  }

  stop(): void {
    this.stopped = true;
    this.current?.();
  }
}

interface FailoverSplit {
  readonly total: number;
  readonly redial: number;
  readonly takeBack: number;
  readonly firstByte: number;
}

const FAILOVER_ENV = 'bench-failover';

/**
 * One failover turn. With `nudge`, one request goes through HAProxy right after the SIGKILL: roundrobin's
 * next server is then the dead replica, so the executor's re-dial is sent there first, before the health
 * check (every 1 s, down after 2 failures) has marked it down. The dead replica's port refuses at once
 * (the host is up, the process is gone), and HAProxy retries and redispatches within milliseconds (checked
 * with a bare HTTP server killed behind it: 2 ms per request); a replica whose machine is gone would
 * instead cost up to `timeout connect` (5 s) per try until the health check marks it down.
 */
async function failoverTurn(nudge: boolean): Promise<FailoverSplit> {
  const work = workDir('replicas-failover');
  const credentials = newCredentials();
  const redis = await startBenchRedis();
  const hosts: HostProc[] = [];
  let balancer: BenchHaproxy | undefined;
  let executor: SpawnedExecutor | undefined;
  let follower: SeqFollower | undefined;
  try {
    const urlFile = redisUrlFile(work.dir, redis.url);
    for (const name of ['a', 'b']) hosts.push(new HostProc(['--data-dir', join(work.dir, name), '--redis-url-file', urlFile], credentials, work.dir));
    const urls = await Promise.all(hosts.map((host) => host.listening()));
    balancer = await startBenchHaproxy(urls.map((url, i) => ({ name: `replica${i + 1}`, port: Number(new URL(url).port) })));
    const joined = await joinExecutor(balancer.url, FAILOVER_ENV, credentials, hosts);
    executor = joined.executor;
    const owner = joined.owner;
    const other = hosts.find((host) => host !== owner) as HostProc;
    const ownerUrl = urls[hosts.indexOf(owner)] ?? '';
    const otherUrl = urls[hosts.indexOf(other)] ?? '';
    const processes = processesOf(FAILOVER_ENV);
    const started = await api(ownerUrl, credentials.token, 'POST', processes, { argv: ['sh', '-c', 'i=0; while [ $i -lt 100000 ]; do echo line $i; i=$((i+1)); sleep 0.02; done'] });
    follower = new SeqFollower(`${otherUrl}${processes}/${String(started['id'])}/events`, credentials.token);
    await follower.firstAfter(10, 30_000); // a few lines in, through the other replica
    const lastSeq = follower.lastSeq;
    const killedAt = performance.now();
    await owner.stop('SIGKILL');
    if (nudge) await fetch(`${balancer.url}/readyz`).then((response) => response.arrayBuffer()).catch(() => undefined);
    const dialled = await other.line(`environment ${FAILOVER_ENV} generation `, killedAt);
    const upgraded = other.lines.find((line) => line.at >= killedAt && line.text.includes(`environment ${FAILOVER_ENV} generation `) && line.text.endsWith(': starting'))?.at ?? dialled;
    const taken = await other.line(`environment ${FAILOVER_ENV}: session `, killedAt);
    const firstByte = await follower.firstAfter(lastSeq);
    return { total: firstByte - killedAt, redial: upgraded - killedAt, takeBack: taken - upgraded, firstByte: firstByte - taken };
  } finally {
    follower?.stop();
    if (executor !== undefined) await stopExecutor(executor);
    await balancer?.stop();
    await Promise.allSettled(hosts.map((host) => host.stop()));
    await redis.stop();
    work.remove();
  }
}

async function failoverChecks(context: BenchContext): Promise<Row[]> {
  const turns = sized(context, 5, 2);
  const rows: Row[] = [];
  for (const nudge of [false, true]) {
    const what = nudge ? "HAProxy's rotation on the dead replica" : "HAProxy's rotation on the live replica";
    context.log(`  2. failover (${what}): ${turns} turns of SIGKILL of the owner, two replicas behind HAProxy`);
    const splits: FailoverSplit[] = [];
    for (let i = 0; i < turns; i += 1) {
      splits.push(await failoverTurn(nudge));
      context.log(`    turn ${i + 1}: ${JSON.stringify(splits[splits.length - 1], (_k, v: unknown) => (typeof v === 'number' ? Math.round(v) : v))}`);
    }
    const row = (label: string, key: keyof FailoverSplit): Check => {
      const s = summarize(splits.map((split) => split[key]));
      return { kind: 'check', suite: 'replicas', label, value: `${Math.round(s.median)} ms [${Math.round(s.min)}–${Math.round(s.max)}] (${s.n} turns)`, goal: 'reported', met: true };
    };
    rows.push(
      row(`failover, ${what}: SIGKILL of the owner → first new output byte read through the other replica (a reader following by seq)`, 'total'),
      row('  of which: the executor re-dialling HAProxy and landing on the other replica (SIGKILL → its upgrade there: `generation N: starting`)', 'redial'),
      row('  of which: the take-back (that upgrade → `session … taken back`)', 'takeBack'),
      row("  of which: taken back → the reader's first new byte (the new owner's first append, the follower's XREAD)", 'firstByte'),
    );
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------------
// 3. Two replicas vs one, 20 environments × N processes.

/** Start → `closed` of one `echo x` on `url`: POST the start, read its SSE stream until `closed`. */
async function runOne(url: string, token: string, env: string): Promise<number> {
  const t0 = performance.now();
  const started = await api(url, token, 'POST', processesOf(env), { argv: ['echo', 'x'] });
  const response = await fetch(`${url}${processesOf(env)}/${String(started['id'])}/events`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
  if (!response.ok || response.body === null) throw new Error(`events answered ${response.status}`);
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of response.body) {
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    if (text.includes('event: closed')) break;
  }
  if (!text.includes('event: closed')) throw new Error('an events stream ended before closed');
  return performance.now() - t0;
}

async function fleetTurn(replicas: 1 | 2, environments: number, perEnvironment: number): Promise<Metrics> {
  const work = workDir('replicas-fleet');
  const credentials = newCredentials();
  const redis = await startBenchRedis();
  const hosts: HostProc[] = [];
  const executors: SpawnedExecutor[] = [];
  try {
    const urlFile = redisUrlFile(work.dir, redis.url);
    const ids = Array.from({ length: environments }, (_v, i) => `fleet-${String(i + 1).padStart(2, '0')}`);
    // One operator token per environment: the API allows 100 requests per second per token (per replica),
    // and a process here is two (its start, its event stream), so one token would cap each replica at 50/s.
    const tokens = new Map(ids.map((id) => [id, randomBytes(24).toString('base64url')]));
    const tokensFile = join(work.dir, 'operator-tokens');
    writeFileSync(tokensFile, ids.map((id) => `${id} operate ${id} ${tokens.get(id) ?? ''}\n`).join(''), { mode: 0o600 });
    for (let i = 0; i < replicas; i += 1) hosts.push(new HostProc(['--data-dir', join(work.dir, `r${i}`), '--redis-url-file', urlFile, '--operator-tokens-file', tokensFile, ...FLEET_LIMITS], credentials, work.dir));
    const urls = await Promise.all(hosts.map((host) => host.listening()));
    const owners = new Map<string, string>();
    // Executor i dials replica i mod n directly: an even split. (Through HAProxy's roundrobin, executors
    // joining one after another put every upgrade on the same replica: each makes two connections, its
    // registration and its upgrade. See the suite's results.)
    for (const [i, id] of ids.entries()) {
      const joined = await joinExecutor(urls[i % urls.length] ?? '', id, credentials, hosts);
      executors.push(joined.executor);
      owners.set(id, urls[hosts.indexOf(joined.owner)] ?? '');
    }
    const perReplica = urls.map((url) => [...owners.values()].filter((u) => u === url).length);
    await sleep(500);
    // Unloaded: ten processes one after another on one environment, before the batch.
    const alone: number[] = [];
    for (let n = 0; n < 10; n += 1) alone.push(await runOne(owners.get(ids[0] ?? '') ?? '', tokens.get(ids[0] ?? '') ?? '', ids[0] ?? ''));
    const cpu0 = { hosts: hosts.map((h) => procCpu(h.pid).ownMs), redis: procCpu(redis.pid).ownMs, executors: executors.map((e) => cpuMsOfTree(e.pid)), bench: process.cpuUsage() };
    const t0 = performance.now();
    const latencies: number[] = [];
    await Promise.all(
      ids.map(async (id) => {
        for (let n = 0; n < perEnvironment; n += 1) latencies.push(await runOne(owners.get(id) ?? '', tokens.get(id) ?? '', id));
      }),
    );
    const wall = performance.now() - t0;
    const bench = process.cpuUsage(cpu0.bench);
    const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);
    latencies.sort((a, b) => a - b);
    return {
      perSecond: latencies.length / (wall / 1000),
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      alone: percentile([...alone].sort((a, b) => a - b), 50),
      wallS: wall / 1000,
      hostCores: (sum(hosts.map((h) => procCpu(h.pid).ownMs)) - sum(cpu0.hosts)) / wall,
      redisCores: (procCpu(redis.pid).ownMs - cpu0.redis) / wall,
      executorCores: (sum(executors.map((e) => cpuMsOfTree(e.pid))) - sum(cpu0.executors)) / wall,
      benchCores: (bench.user + bench.system) / 1000 / wall,
      minOwned: Math.min(...perReplica),
    };
  } finally {
    await Promise.allSettled(executors.map((executor) => stopExecutor(executor)));
    await Promise.allSettled(hosts.map((host) => host.stop()));
    await redis.stop();
    work.remove();
  }
}

/** How HAProxy's roundrobin spreads `count` executors over two replicas, joining one after another or all at once: environments per replica. */
async function haproxySpread(count: number, together: boolean): Promise<number[]> {
  const work = workDir('replicas-spread');
  const credentials = newCredentials();
  const redis = await startBenchRedis();
  const hosts: HostProc[] = [];
  const executors: SpawnedExecutor[] = [];
  let balancer: BenchHaproxy | undefined;
  try {
    const urlFile = redisUrlFile(work.dir, redis.url);
    for (const name of ['a', 'b']) hosts.push(new HostProc(['--data-dir', join(work.dir, name), '--redis-url-file', urlFile, ...FLEET_LIMITS], credentials, work.dir));
    const urls = await Promise.all(hosts.map((host) => host.listening()));
    const haproxy = await startBenchHaproxy(urls.map((url, i) => ({ name: `replica${i + 1}`, port: Number(new URL(url).port) })));
    balancer = haproxy;
    const ids = Array.from({ length: count }, (_v, i) => `spread-${String(i + 1).padStart(2, '0')}`);
    const join1 = async (id: string): Promise<HostProc> => {
      const joined = await joinExecutor(haproxy.url, id, credentials, hosts);
      executors.push(joined.executor);
      return joined.owner;
    };
    const owners = together ? await Promise.all(ids.map(join1)) : await ids.reduce<Promise<HostProc[]>>(async (done, id) => [...(await done), await join1(id)], Promise.resolve([]));
    return hosts.map((host) => owners.filter((owner) => owner === host).length);
  } finally {
    await Promise.allSettled(executors.map((executor) => stopExecutor(executor)));
    await balancer?.stop();
    await Promise.allSettled(hosts.map((host) => host.stop()));
    await redis.stop();
    work.remove();
  }
}

async function fleetFigures(context: BenchContext): Promise<Row[]> {
  const environments = sized(context, 20, 5);
  const perEnvironment = sized(context, 100, 10);
  const runs = sized(context, Math.max(2, Math.min(3, context.runs)), 1);
  context.log(`  3. two replicas vs one: ${environments} environments × ${perEnvironment} processes of echo x, ${runs} paired runs (no warm-up)`);
  const results = await interleave({ one: () => fleetTurn(1, environments, perEnvironment), two: () => fleetTurn(2, environments, perEnvironment) }, { runs, warmup: 0, between: context.settle, log: context.log });
  const cores = (variant: 'one' | 'two'): string =>
    ['hostCores', 'redisCores', 'executorCores', 'benchCores'].map((metric) => `${metric.replace('Cores', '')} ${formatNumber(summarize(series(results[variant], metric)).median)}`).join(', ');
  const note = `cores used over the batch (median): one replica: ${cores('one')}; two replicas: ${cores('two')} (host = the replicas together; executor = the ${environments} executors with their processes; bench = the client making the starts and reading the streams). The fewest environments one replica owned with two: ${series(results.two, 'minOwned').join(', ')}.`;
  const oneByOne = await haproxySpread(10, false);
  const allAtOnce = await haproxySpread(10, true);
  context.log(`    through HAProxy: 10 executors one after another: ${oneByOne.join('/')}; all at once: ${allAtOnce.join('/')}`);
  return [
    { kind: 'check', suite: 'replicas', label: "environments per replica when 10 executors join through HAProxy (roundrobin), one after another / all at once", value: `${oneByOne.join('/')} / ${allAtOnce.join('/')}`, goal: 'reported', met: true, note: 'each executor makes two connections through the balancer (its registration, then its upgrade), so roundrobin puts every upgrade of executors joining one at a time on the same replica; the fleet figures above dial the replicas directly, executor i to replica i mod 2' },
    figure({ suite: 'replicas', label: `${environments} environments × ${perEnvironment} echo x, processes completed per second: two replicas (exec-rx column) vs one (raw column)`, unit: '/s', raw: series(results.one, 'perSecond'), rx: series(results.two, 'perSecond'), note }),
    figure({ suite: 'replicas', label: `${environments} environments × ${perEnvironment} echo x, p99 start → closed: two replicas vs one`, unit: 'ms', raw: series(results.one, 'p99'), rx: series(results.two, 'p99') }),
    figure({ suite: 'replicas', label: `${environments} environments × ${perEnvironment} echo x, p50 start → closed: two replicas vs one`, unit: 'ms', raw: series(results.one, 'p50'), rx: series(results.two, 'p50') }),
    figure({ suite: 'replicas', label: 'one echo x alone (ten one after another before the batch), p50 start → closed: two replicas vs one', unit: 'ms', raw: series(results.one, 'alone'), rx: series(results.two, 'alone') }),
  ];
}

// ---------------------------------------------------------------------------------------------------
// 4. Redis memory per retained MiB of output.

const MEMORY_ENV = 'bench-redis-memory';

async function memoryTurn(processes: number, each: number): Promise<Metrics> {
  const work = workDir('replicas-memory');
  const credentials = newCredentials();
  const redis = await startBenchRedis();
  const host = new HostProc(['--data-dir', join(work.dir, 'replica'), '--redis-url-file', redisUrlFile(work.dir, redis.url)], credentials, work.dir);
  let executor: SpawnedExecutor | undefined;
  try {
    const url = await host.listening();
    executor = (await joinExecutor(url, MEMORY_ENV, credentials, [host])).executor;
    await sleep(500);
    const before = await redis.memory('used_memory');
    const rssBefore = await redis.memory('used_memory_rss');
    const path = processesOf(MEMORY_ENV);
    const ids = await Promise.all(Array.from({ length: processes }, async () => String((await api(url, credentials.token, 'POST', path, { argv: ['head', '-c', String(each), '/dev/urandom'] }))['id'])));
    for (const id of ids) {
      for (;;) {
        const state = (await api(url, credentials.token, 'GET', `${path}/${id}`))['state'];
        if (state === 'closed') break;
        await sleep(50);
      }
    }
    await sleep(1000); // the last appends and the metadata
    const after = await redis.memory('used_memory');
    const rssAfter = await redis.memory('used_memory_rss');
    const mib = (processes * each) / MiB;
    return { perMiB: (after - before) / MiB / mib, rssPerMiB: (rssAfter - rssBefore) / MiB / mib, beforeMiB: before / MiB, afterMiB: after / MiB };
  } finally {
    if (executor !== undefined) await stopExecutor(executor);
    await host.stop();
    await redis.stop();
    work.remove();
  }
}

async function memoryChecks(context: BenchContext): Promise<Row[]> {
  const processes = 16;
  const each = sized(context, 4 * MiB, MiB);
  const turns = sized(context, 3, 1);
  context.log(`  4. Redis memory: ${processes} processes × ${each / MiB} MiB of random bytes, ${turns} turns (a fresh redis-server each)`);
  const results: Metrics[] = [];
  for (let i = 0; i < turns; i += 1) {
    results.push(await memoryTurn(processes, each));
    context.log(`    turn ${i + 1}: ${Object.entries(results[results.length - 1] ?? {}).map(([k, v]) => `${k}=${formatNumber(v)}`).join(' ')}`);
  }
  const cell = (metric: string): string => {
    const s = summarize(series(results, metric));
    return `${formatNumber(s.median)} MiB [${formatNumber(s.min)}–${formatNumber(s.max)}] per MiB (${s.n} turns)`;
  };
  return [
    { kind: 'check', suite: 'replicas', label: `Redis used_memory per retained MiB of output (${processes} processes × ${each / MiB} MiB)`, value: cell('perMiB'), goal: 'reported', met: true },
    { kind: 'check', suite: 'replicas', label: `Redis used_memory_rss per retained MiB of output (same)`, value: cell('rssPerMiB'), goal: 'reported', met: true },
  ];
}

/** The whole suite: each part stops what it started, even when it fails. */
export async function replicasSuite(context: BenchContext): Promise<Row[]> {
  const rows: Row[] = [];
  const parts: readonly (readonly [string, (context: BenchContext) => Promise<Row[]>])[] = [
    ['stream', streamFigures],
    ['failover', failoverChecks],
    ['fleet', fleetFigures],
    ['memory', memoryChecks],
    ['forwarding', forwardingFigures],
  ];
  // EXEC_RX_BENCH_REPLICAS=stream,failover,fleet,memory,forwarding runs only those parts (a re-run of one figure).
  const wanted = process.env['EXEC_RX_BENCH_REPLICAS']?.split(',');
  const failed: string[] = [];
  const loads: string[] = [];
  for (const [name, part] of parts) {
    if (wanted !== undefined && !wanted.includes(name)) continue;
    const before = loadavg()[0] ?? Number.NaN;
    try {
      rows.push(...(await part(context)));
    } catch (error: unknown) {
      // One part failing does not lose the others' figures; the suite still fails at the end.
      context.log(`  !! replicas ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      failed.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      rows.push({ kind: 'check', suite: 'replicas', label: `${name} part`, value: 'failed', goal: 'runs', met: false, note: failed[failed.length - 1] ?? '' });
    }
    loads.push(`${name} ${before.toFixed(1)}→${(loadavg()[0] ?? Number.NaN).toFixed(1)}`);
  }
  // The machine may be shared: the load around each part says how much else ran.
  rows.push({ kind: 'check', suite: 'replicas', label: '1-min load average before→after each part', value: loads.join(', '), goal: 'reported', met: true });
  return rows;
}
