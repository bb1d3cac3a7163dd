/**
 * Forwarding between replicas (issue 39), part 5 of the replicas suite (`--only=replicas`,
 * `EXEC_RX_BENCH_REPLICAS=forwarding` alone): two built `exec-rx host` replicas on one redis-server, both
 * with `--replica-key-file` (the same key), one codex executor in direct mode dialling replica A, so A
 * owns the environment. Every call is a plain `fetch` with an operator token straight to one replica's
 * own url (no balancer): to A (the owner, answered by itself) or to B (the non-owner, which forwards the
 * call to A and answers with `exec-rx-forwarded-by`; each answer's header is checked, both ways).
 * Paired runs, the order rotating, one warm-up run discarded, a second owner turn as the control pair.
 * 1. **Latency**, each call on its own clock (from before the `fetch` to the end of its body), N calls of
 *    each per turn (200; `--quick` 40), one after another: the start of `cat` with `pipeStdin` (a FIFO
 *    setup, its feeder and the command: three starts on the executor, `src/exec/stdin-fifo.ts`); one small
 *    stdin write to it (3 bytes); the start of a `sleep 30` (no stdin: one start) and its terminate.
 *    Per call, untimed: the cat's stdin end, both processes' waits and releases, so at most two
 *    processes live at a time. Median and p99 of each turn's N calls; rows: the median over the runs,
 *    non-owner (exec-rx column) against owner (raw column), and the paired ratios non-owner / owner.
 * 2. **Upload**: 100 MB (`--quick` 20 MB) of random bytes to the stdin of one `wc -c` (`pipeStdin`), in
 *    sequential writes of {@link WRITE_BYTES} (base64 in a JSON body, under the API's 4 MiB body limit),
 *    then the stdin end and a wait: MB/s from before the first write to the wait's answer (the process
 *    exited having read every byte). The count `wc -c` printed is read back from the process's log and
 *    must equal the bytes sent; its exit code must be 0. The CPU of each replica, and of the executor with
 *    its processes, over the upload (`/proc`).
 *
 * The API allows 100 requests per second per token on each replica (the one a call reaches counts it; a
 * forwarded call is not counted again at the owner), and a latency turn makes about 300 per second: the
 * calls take their token in turn from {@link TOKENS} tokens of one tokens file.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { spawnExecutor } from '../../src/executor/spawn-executor';
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { stopExecutor, trackExecutor } from '../lib/executors';
import { cpuMsOfTree } from '../lib/host-harness';
import { procCpu } from '../lib/proc-cpu';
import type { HostCredentials } from '../lib/replica-procs';
import { HostProc, redisUrlFile, startBenchRedis } from '../lib/replica-procs';
import type { Row } from '../lib/report';
import { figure } from '../lib/report';
import type { Metrics } from '../lib/stats';
import { formatNumber, interleave, percentile, series, summarize } from '../lib/stats';

const MB = 1e6;
const MiB = 1024 * 1024;
const ENV = 'bench-forwarding';
const PROCESSES = `/api/v1/environments/${ENV}/processes`;
/** The header a non-owner's answer carries (`src/host/api/forwarding.ts`). */
const FORWARDED_BY = 'exec-rx-forwarded-by';
/** Operator tokens the calls take in turn (see the module's doc). */
const TOKENS = 16;
/**
 * Bytes per stdin write: 3 MiB − 3 KiB. Its base64 (4/3, no padding: a multiple of 3) plus the JSON around
 * it stays under the API's default 4 MiB body limit; a whole 3 MiB (exactly 4 MiB of base64) does not.
 */
export const WRITE_BYTES = 3 * MiB - 3 * 1024;

/** One answer, as a plain `fetch` saw it. */
interface Answer {
  readonly status: number;
  readonly text: string;
  readonly forwardedBy: string | null;
  /** From before the `fetch` to the end of the body, ms. */
  readonly ms: number;
}

/** The two replicas, the tokens, and whether the calls of a turn go to the owner or not. */
interface Cluster {
  readonly owner: HostProc;
  readonly other: HostProc;
  readonly ownerUrl: string;
  readonly otherUrl: string;
  readonly tokens: readonly string[];
  /** The executor's pid (its CPU with its processes', `cpuMsOfTree`). */
  readonly executorPid: number;
}

let nextToken = 0;

/** One call with the next token of the pool; `body` a JSON value or a JSON text. */
async function call(cluster: Cluster, base: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const token = cluster.tokens[nextToken++ % cluster.tokens.length] ?? '';
  const init: RequestInit = { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) } };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  const t0 = performance.now();
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  return { status: response.status, text, forwardedBy: response.headers.get(FORWARDED_BY), ms: performance.now() - t0 };
}

/** `answer`, once its status is `status` and its forwarded-by header is what `base` must give; throws otherwise. */
function expectAnswer(cluster: Cluster, base: string, what: string, answer: Answer, status: number): Answer {
  if (answer.status !== status) throw new Error(`${what} via ${base} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  const forwarded = base === cluster.otherUrl;
  if (forwarded !== (answer.forwardedBy !== null)) throw new Error(`${what} via ${base}: ${FORWARDED_BY} ${String(answer.forwardedBy)}, expected it ${forwarded ? 'set' : 'absent'}`);
  return answer;
}

const idOf = (answer: Answer): string => {
  const id = (JSON.parse(answer.text) as { id?: unknown }).id;
  if (typeof id !== 'string') throw new Error(`a start answered no id: ${answer.text.slice(0, 300)}`);
  return id;
};

/** Waits for `id` to exit and releases it (a release answered 409 while its close is on its way is sent again); returns the exit code. */
async function waitAndRelease(cluster: Cluster, base: string, id: string): Promise<number | null> {
  const waited = expectAnswer(cluster, base, 'wait', await call(cluster, base, 'POST', `${PROCESSES}/${id}/wait`), 200);
  const exitCode = (JSON.parse(waited.text) as { exitCode?: unknown }).exitCode;
  const deadline = performance.now() + 10_000;
  for (;;) {
    const released = await call(cluster, base, 'DELETE', `${PROCESSES}/${id}`);
    if (released.status === 204) break;
    if (released.status !== 409 || performance.now() > deadline) throw new Error(`release of ${id} via ${base} answered ${released.status}: ${released.text.slice(0, 300)}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return typeof exitCode === 'number' ? exitCode : null;
}

/** One latency turn: `calls` × (start of a `cat`, a write to it, the terminate of a `sleep`), all via `base`. */
async function latencyTurn(cluster: Cluster, base: string, calls: number): Promise<Metrics> {
  const start: number[] = [];
  const plain: number[] = [];
  const stdin: number[] = [];
  const terminate: number[] = [];
  const data = Buffer.from('hi\n').toString('base64');
  for (let i = 0; i < calls; i += 1) {
    const cat = expectAnswer(cluster, base, 'start', await call(cluster, base, 'POST', PROCESSES, { argv: ['cat'], pipeStdin: true }), 201);
    start.push(cat.ms);
    const catId = idOf(cat);
    stdin.push(expectAnswer(cluster, base, 'stdin', await call(cluster, base, 'POST', `${PROCESSES}/${catId}/stdin`, { writeId: `w${i}`, data }), 200).ms);
    expectAnswer(cluster, base, 'stdin end', await call(cluster, base, 'POST', `${PROCESSES}/${catId}/stdin/end`), 200);
    const exitCode = await waitAndRelease(cluster, base, catId);
    if (exitCode !== 0) throw new Error(`cat ${catId} exited ${String(exitCode)}`);
    const slept = expectAnswer(cluster, base, 'start', await call(cluster, base, 'POST', PROCESSES, { argv: ['sleep', '30'] }), 201);
    plain.push(slept.ms);
    const sleeper = idOf(slept);
    const terminated = expectAnswer(cluster, base, 'terminate', await call(cluster, base, 'POST', `${PROCESSES}/${sleeper}/terminate`), 200);
    terminate.push(terminated.ms);
    await waitAndRelease(cluster, base, sleeper);
  }
  const stats = (name: string, values: number[]): Metrics => {
    values.sort((a, b) => a - b);
    return { [`${name}P50`]: percentile(values, 50), [`${name}P99`]: percentile(values, 99) };
  };
  return { ...stats('start', start), ...stats('plain', plain), ...stats('stdin', stdin), ...stats('terminate', terminate) };
}

/** The process's log (its output), once it holds a whole line; throws after 10 s. */
async function logLine(cluster: Cluster, base: string, id: string): Promise<string> {
  const deadline = performance.now() + 10_000;
  for (;;) {
    const log = await call(cluster, base, 'GET', `${PROCESSES}/${id}/log`);
    if (log.status === 200 && log.text.endsWith('\n')) return log.text;
    if (performance.now() > deadline) throw new Error(`the log of ${id} via ${base} answered ${log.status}: ${log.text.slice(0, 300)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One upload turn: `bytes` of `payload` to the stdin of one `wc -c` via `base`; MB/s, and the CPU of each replica. */
async function uploadTurn(cluster: Cluster, base: string, bytes: number, payload: Buffer): Promise<Metrics> {
  const started = expectAnswer(cluster, base, 'start', await call(cluster, base, 'POST', PROCESSES, { argv: ['wc', '-c'], pipeStdin: true }), 201);
  const id = idOf(started);
  const whole = payload.toString('base64');
  const entry = base === cluster.otherUrl ? cluster.other : cluster.owner;
  const entry0 = procCpu(entry.pid).ownMs;
  const owner0 = procCpu(cluster.owner.pid).ownMs;
  const executor0 = cpuMsOfTree(cluster.executorPid);
  const t0 = performance.now();
  let sent = 0;
  for (let n = 0; sent < bytes; n += 1) {
    const size = Math.min(WRITE_BYTES, bytes - sent);
    const data = size === payload.length ? whole : payload.subarray(0, size).toString('base64');
    expectAnswer(cluster, base, 'stdin', await call(cluster, base, 'POST', `${PROCESSES}/${id}/stdin`, `{"writeId":"u${n}","data":"${data}"}`), 200);
    sent += size;
  }
  expectAnswer(cluster, base, 'stdin end', await call(cluster, base, 'POST', `${PROCESSES}/${id}/stdin/end`), 200);
  const waited = expectAnswer(cluster, base, 'wait', await call(cluster, base, 'POST', `${PROCESSES}/${id}/wait`), 200);
  const seconds = (performance.now() - t0) / 1000;
  const entryCpuS = (procCpu(entry.pid).ownMs - entry0) / 1000;
  const ownerCpuS = (procCpu(cluster.owner.pid).ownMs - owner0) / 1000;
  // The executor with its processes: the feeder's `head -c` and `wc -c` were waited for once it saw them exit.
  const executorCpuS = (cpuMsOfTree(cluster.executorPid) - executor0) / 1000;
  const exitCode = (JSON.parse(waited.text) as { exitCode?: unknown }).exitCode;
  if (exitCode !== 0) throw new Error(`wc -c ${id} exited ${String(exitCode)}`);
  // Every byte arrived: what `wc -c` counted, read back from the process's log.
  const counted = Number((await logLine(cluster, base, id)).trim());
  if (counted !== bytes) throw new Error(`wc -c ${id} counted ${counted} bytes, ${bytes} were sent`);
  await waitAndRelease(cluster, base, id);
  return { mbps: bytes / MB / seconds, entryCpuS, ownerCpuS, executorCpuS };
}

/** A cell of the CPU note: median [min–max] of `metric` over a variant's runs. */
function cpuCell(runs: readonly Metrics[], metric: string): string {
  const s = summarize(series(runs, metric));
  return `${formatNumber(s.median)} s [${formatNumber(s.min)}–${formatNumber(s.max)}]`;
}

/** The forwarding part of the replicas suite (see the module's doc): every child it starts is stopped, even on failure. */
export async function forwardingFigures(context: BenchContext): Promise<Row[]> {
  const calls = sized(context, 200, 40);
  const bytes = sized(context, 100 * MB, 20 * MB);
  const runs = context.runs;
  context.log(`  5. forwarding: ${calls} × (start, stdin, terminate) and one ${bytes / MB} MB stdin upload, to the owner vs to the non-owner: ${runs} paired runs + a warm-up`);
  const work = mkdtempSync(join(tmpdir(), 'exec-rx-bench-replicas-forwarding-'));
  const credentials: HostCredentials = { accessKeyId: 'BENCHFORWARDING', secretAccessKey: randomBytes(24).toString('base64url'), token: randomBytes(24).toString('base64url') };
  const redis = await startBenchRedis();
  const hosts: HostProc[] = [];
  let executor: SpawnedExecutor | undefined;
  try {
    const urlFile = redisUrlFile(work, redis.url);
    const keyFile = join(work, 'replica-key');
    writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    const tokens = Array.from({ length: TOKENS }, () => randomBytes(24).toString('base64url'));
    const tokensFile = join(work, 'operator-tokens');
    writeFileSync(tokensFile, tokens.map((token, i) => `bench${i} operate * ${token}\n`).join(''), { mode: 0o600 });
    const flags = ['--redis-url-file', urlFile, '--replica-key-file', keyFile, '--operator-tokens-file', tokensFile];
    for (const name of ['a', 'b']) hosts.push(new HostProc(['--data-dir', join(work, name), ...flags], credentials, work));
    const [owner, other] = hosts as [HostProc, HostProc];
    const [ownerUrl, otherUrl] = await Promise.all([owner.listening(), other.listening()]);
    const since = performance.now();
    executor = trackExecutor(await spawnExecutor({ mode: 'direct', remoteUrl: ownerUrl, environmentId: ENV, credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey } }));
    await owner.line(`environment ${ENV} generation 1: connected`, since);
    const cluster: Cluster = { owner, other, ownerUrl, otherUrl, tokens, executorPid: executor.pid };

    const latency = await interleave(
      { owner: () => latencyTurn(cluster, ownerUrl, calls), forwarded: () => latencyTurn(cluster, otherUrl, calls), ctl: () => latencyTurn(cluster, ownerUrl, calls) },
      { runs, between: context.settle, log: context.log },
    );
    const payload = randomBytes(Math.min(WRITE_BYTES, bytes));
    const upload = await interleave(
      { owner: () => uploadTurn(cluster, ownerUrl, bytes, payload), forwarded: () => uploadTurn(cluster, otherUrl, bytes, payload), ctl: () => uploadTurn(cluster, ownerUrl, bytes, payload) },
      { runs, between: context.settle, log: context.log },
    );

    const versus = 'to the non-owner, forwarded (exec-rx column) vs to the owner (raw column)';
    const ops = [
      ['start', 'start (POST …/processes, `cat` with pipeStdin: three starts on the executor)'],
      ['plain', 'start (POST …/processes, `sleep 30`, no stdin)'],
      ['stdin', 'stdin (POST …/stdin, one 3-byte write)'],
      ['terminate', 'terminate (POST …/terminate, a running `sleep 30`)'],
    ] as const;
    const rows: Row[] = [];
    for (const [op, what] of ops) {
      for (const [stat, name] of [['P50', 'median'], ['P99', 'p99']] as const) {
        const metric = `${op}${stat}`;
        rows.push(
          figure({
            suite: 'replicas',
            label: `forwarding: ${what}, ${name} of ${calls} calls: ${versus}`,
            unit: 'ms',
            raw: series(latency.owner, metric),
            rx: series(latency.forwarded, metric),
            ctl: series(latency.ctl, metric),
          }),
        );
      }
    }
    const note =
      `${Math.ceil(bytes / WRITE_BYTES)} writes of at most ${WRITE_BYTES} bytes, each a ${formatNumber((4 * WRITE_BYTES) / 3 / MiB)} MiB JSON body; ` +
      `MB/s from before the first write to the answer of the wait after the stdin end; every run's \`wc -c\` counted exactly ${bytes} bytes. ` +
      `CPU per upload: owner turns, the owner ${cpuCell(upload.owner, 'entryCpuS')}; forwarded turns, the non-owner ${cpuCell(upload.forwarded, 'entryCpuS')} ` +
      `and the owner ${cpuCell(upload.forwarded, 'ownerCpuS')}; the executor with its processes (the feeder, \`wc -c\`) ${cpuCell(upload.owner, 'executorCpuS')} ` +
      `(owner turns), ${cpuCell(upload.forwarded, 'executorCpuS')} (forwarded turns)`;
    rows.push(
      figure({
        suite: 'replicas',
        label: `forwarding: one ${bytes / MB} MB stdin upload to \`wc -c\`: ${versus}`,
        unit: 'MB/s',
        raw: series(upload.owner, 'mbps'),
        rx: series(upload.forwarded, 'mbps'),
        ctl: series(upload.ctl, 'mbps'),
        note,
      }),
    );
    return rows;
  } finally {
    if (executor !== undefined) await stopExecutor(executor);
    await Promise.allSettled(hosts.map((host) => host.stop()));
    await redis.stop();
    rmSync(work, { recursive: true, force: true });
  }
}
