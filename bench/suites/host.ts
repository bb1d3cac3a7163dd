/**
 * 7. The host's operator API (issue: the host serves its users):
 * - fan-out: one process's output to 1, 10 and 100 SSE subscribers on loopback (the host with its output
 *   log on disk, its default, so a reader behind the live edge reads the log), against a raw Node
 *   server writing the same SSE bytes (the host's own frame encoding) to as many responses; aggregate
 *   MB/s from `go` to the last `closed`. Readers run in a child process for both sides.
 * - fan-out to 10 readers of the binary event stream, against a raw server writing the same binary frames.
 * - start→exit of `/bin/true` through the API + SSE (POST, then the events stream to `exited`),
 *   against the library's own start on the same environment.
 * - host RSS per idle SSE subscriber, per retained MiB of history, and with one subscriber that reads
 *   nothing while 32 MiB stream past it (reported, no goal).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import { BINARY_FRAMING } from '../../src/host/api/binary-frames';
import type { WireFrame } from '../../src/host/api/event-framing';
import { frameOf } from '../../src/host/api/event-frames';
import type { ProcessEvent } from '../../src/exec/process-event';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import type { BenchHost } from '../lib/host-harness';
import { cpuMsOfTree, HOST_ENV, RawSseServer, Readers, startBenchHost } from '../lib/host-harness';
import { figure } from '../lib/report';
import { hostMemory } from './host-memory';
import type { Figure } from '../lib/report';
import { formatNumber, interleave, series, summarize } from '../lib/stats';
import type { Metrics } from '../lib/stats';

const CHUNK = 8192;
const PROCESSES = `/api/v1/environments/${HOST_ENV}/processes`;

/** A binary frame's bytes (the head and the chunk joined: the raw server writes each frame whole). */
const whole = (frame: WireFrame): Buffer => (frame instanceof Uint8Array ? frame : Buffer.concat([frame.head, frame.body]));

/**
 * The frames the host sends for `bytes` of zeros in 8 KiB chunks, exit 0, close, as SSE or (`binary`) the
 * binary event stream: the raw server sends the same.
 */
function framesFor(bytes: number, binary = false): Buffer[] {
  const chunks = Math.ceil(bytes / CHUNK);
  const zeros = new Uint8Array(CHUNK);
  const encode = (event: ProcessEvent): Buffer => (binary ? whole(BINARY_FRAMING.event(event)) : frameOf(event));
  const frames: Buffer[] = [];
  for (let seq = 1; seq <= chunks; seq += 1) frames.push(encode({ type: 'output', seq, stream: 'stdout', chunk: zeros }));
  frames.push(encode({ type: 'exited', seq: chunks + 1, exitCode: 0, sandboxDenied: false }), encode({ type: 'closed', seq: chunks + 2 }));
  return frames;
}

async function json(response: Response): Promise<Record<string, unknown>> {
  if (!response.ok) throw new Error(`operator API answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/** One exec-rx turn: a process that waits for `go` on stdin, N subscribers, then `bytes` of output. */
async function hostTurn(bench: BenchHost, subscribers: number, bytes: number, binary = false): Promise<Metrics> {
  const started = await json(await bench.api('POST', PROCESSES, { argv: ['sh', '-c', `read go; head -c ${bytes} /dev/zero`], pipeStdin: true }));
  const id = String(started['id']);
  const readers = new Readers(`${bench.host.url}${PROCESSES}/${id}/events`, bench.token, subscribers, binary);
  try {
    await readers.next();
    const cpu0 = process.cpuUsage();
    const executor0 = cpuMsOfTree(bench.executorPid);
    readers.go();
    await json(await bench.api('POST', `${PROCESSES}/${id}/stdin`, { writeId: 'go', data: Buffer.from('go\n').toString('base64') }));
    await bench.api('POST', `${PROCESSES}/${id}/stdin/end`);
    const done = await readers.next();
    const cpu = process.cpuUsage(cpu0);
    return cpuShares(done, (cpu.user + cpu.system) / 1000, cpuMsOfTree(bench.executorPid) - executor0);
  } finally {
    await readers.close();
    await bench.api('DELETE', `${PROCESSES}/${id}`);
  }
}

/**
 * A fan-out turn's figures from the readers' report: aggregate MB/s, and the cores each side used over
 * the turn (the readers' child, the server: this process, the executor with its processes). The machine
 * has as many cores as `os.availableParallelism()`; where their sum reaches it, the readers wait for CPU.
 */
function cpuShares(done: Record<string, number>, serverCpuMs: number, executorCpuMs: number): Metrics {
  const ms = done['ms'] ?? 1;
  return { mbps: (done['bytes'] ?? 0) / 1e6 / (ms / 1000), readerCores: (done['cpuMs'] ?? 0) / ms, serverCores: serverCpuMs / ms, executorCores: executorCpuMs / ms };
}

async function rawTurn(raw: RawSseServer, token: string, subscribers: number, frames: readonly Buffer[], binary = false): Promise<Metrics> {
  const readers = new Readers(raw.url, token, subscribers, binary);
  try {
    await readers.next();
    const cpu0 = process.cpuUsage();
    readers.go();
    await raw.send(frames);
    const done = await readers.next();
    const cpu = process.cpuUsage(cpu0);
    return cpuShares(done, (cpu.user + cpu.system) / 1000, 0);
  } finally {
    await readers.close();
  }
}

async function fanOut(context: BenchContext, bench: BenchHost, raw: RawSseServer): Promise<Figure[]> {
  const results: Figure[] = [];
  for (const subscribers of [1, 10, 100]) {
    const bytes = sized(context, Math.max(2, Math.round(64 / subscribers)) * 1024 * 1024, 1024 * 1024);
    const frames = framesFor(bytes);
    context.log(`  fan-out to ${subscribers}: ${bytes / 1024 / 1024} MiB each`);
    const runs = await interleave({ raw: () => rawTurn(raw, bench.token, subscribers, frames), rx: () => hostTurn(bench, subscribers, bytes) }, { runs: context.runs, between: context.settle, log: context.log });
    results.push(
      figure({
        suite: 'host',
        label: `fan-out: one process to ${subscribers} SSE subscriber${subscribers === 1 ? '' : 's'}, aggregate MB/s`,
        unit: 'MB/s',
        raw: series(runs.raw, 'mbps'),
        rx: series(runs.rx, 'mbps'),
        ...(subscribers === 1 ? {} : { ratioGoal: { min: 0.8 } }),
        note: `${subscribers === 1 ? 'raw sends the frames from memory; exec-rx includes the executor producing the output' : 'each frame encoded once for all subscribers'}; the host keeps output on disk (its default) and a reader behind the live edge reads the log; the bench host's send buffer is 64 MiB so that no reader is cut (the raw server never cuts)`,
      }),
      figure({
        suite: 'host',
        label: `fan-out to ${subscribers}: cores used by the readers' process / the server / the executor (raw: no executor)`,
        unit: 'cores',
        raw: series(runs.raw, 'readerCores'),
        rx: series(runs.rx, 'readerCores'),
        note: `server: raw ${formatNumber(summarize(series(runs.raw, 'serverCores')).median)}, exec-rx ${formatNumber(summarize(series(runs.rx, 'serverCores')).median)} cores; executor with its processes: ${formatNumber(summarize(series(runs.rx, 'executorCores')).median)} cores; ${availableParallelism()} cores in all (medians)`,
      }),
    );
  }
  return results;
}

/**
 * Fan-out to 10 readers of the binary event stream, against a raw Node server writing the same binary
 * frames (the host's own encoding, each frame whole) to as many responses.
 */
async function binaryFanOut(context: BenchContext, bench: BenchHost, raw: RawSseServer): Promise<Figure> {
  const subscribers = 10;
  const bytes = sized(context, 6 * 1024 * 1024, 1024 * 1024);
  const frames = framesFor(bytes, true);
  context.log(`  binary fan-out to ${subscribers}: ${bytes / 1024 / 1024} MiB each`);
  const runs = await interleave(
    { raw: () => rawTurn(raw, bench.token, subscribers, frames, true), rx: () => hostTurn(bench, subscribers, bytes, true) },
    { runs: context.runs, between: context.settle, log: context.log },
  );
  return figure({
    suite: 'host',
    label: `fan-out: one process to ${subscribers} binary-stream subscribers, aggregate MB/s (raw: a raw server of the same framing)`,
    unit: 'MB/s',
    raw: series(runs.raw, 'mbps'),
    rx: series(runs.rx, 'mbps'),
    ratioGoal: { min: 0.8 },
    note: 'as the SSE fan-out, with readers that ask for application/vnd.exec-rx.events; the raw server writes the host\'s binary frames from memory',
  });
}

/** start → exited of /bin/true: through the API and SSE, or the library's own start on the same environment. */
async function startExit(context: BenchContext, bench: BenchHost): Promise<Figure> {
  const starts = sized(context, 20, 5);
  const viaApi = async (): Promise<number> => {
    const t0 = performance.now();
    const started = await json(await bench.api('POST', PROCESSES, { argv: ['/bin/true'], cwd: '/' }));
    const events = await bench.api('GET', `${PROCESSES}/${String(started['id'])}/events`);
    const reader = events.body?.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (reader !== undefined && !text.includes('event: exited')) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const ms = performance.now() - t0;
    await reader?.cancel();
    return ms;
  };
  const viaLibrary = async (): Promise<number> => {
    const t0 = performance.now();
    const { process } = await bench.environment.getExecBackend().start({ argv: ['/bin/true'], cwd: '/' });
    await firstValueFrom(process.state$.pipe(filter((s) => s !== 'running')));
    const ms = performance.now() - t0;
    process.release();
    return ms;
  };
  const turn = async (one: () => Promise<number>): Promise<Metrics> => {
    const times: number[] = [];
    for (let i = 0; i < starts; i += 1) times.push(await one());
    times.sort((a, b) => a - b);
    return { ms: times[Math.floor(times.length / 2)] ?? Number.NaN };
  };
  const runs = await interleave({ raw: () => turn(viaLibrary), rx: () => turn(viaApi) }, { runs: context.runs, between: context.settle, log: context.log });
  return figure({
    suite: 'host',
    label: 'start→exit of /bin/true through the API + SSE (raw column: the library on the same environment)',
    unit: 'ms',
    raw: series(runs.raw, 'ms'),
    rx: series(runs.rx, 'ms'),
    ratioGoal: { max: 2 },
  });
}

/** The whole suite. */
export async function hostSuite(context: BenchContext): Promise<Figure[]> {
  // The host's embedded default keeps output on disk, and its readers read the log: so does this bench.
  const dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-bench-host-'));
  const bench = await startBenchHost(64 * 1024 * 1024, { dataDir, totalBytes: 1024 * 1024 * 1024 });
  const raw = await RawSseServer.start();
  const rawBinary = await RawSseServer.start('application/vnd.exec-rx.events');
  try {
    const figures = await fanOut(context, bench, raw);
    figures.push(await binaryFanOut(context, bench, rawBinary));
    figures.push(await startExit(context, bench));
    figures.push(...(await hostMemory(context)));
    return figures;
  } finally {
    await raw.close();
    await rawBinary.close();
    await bench.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
