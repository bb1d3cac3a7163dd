/**
 * 9. The host's output log on disk (issue 20), against the same host keeping each process's history in
 * memory (the raw column is the in-memory host, exec-rx the host with a data dir; both in this process,
 * each with its own direct executor, turns interleaved):
 * - 100 MB through the host to one SSE reader (readers in the `sse-readers.ts` child): MB/s from `go`
 *   to `closed` (goal ≥ 0.9 × in-memory); the host's CPU (this process: the host, its executor
 *   connection and the log writer; not the executor, not the reader) per turn; bytes the log wrote to
 *   disk per byte of output (the process's files once it closed: segments, indexes, manifest, meta);
 * - RSS growth of a host (fresh `node --expose-gc` process per turn, `../host-memory-child.ts` `stalled`)
 *   while one subscriber reads nothing as 100 MiB stream: the disk host keeps that reader (it ends up
 *   100 MiB behind, served from the log later); the in-memory host ends its stream at the 1 MiB send
 *   buffer. Goal: the disk host ≤ idle + 32 MiB;
 * - fan-out of one process to 10 SSE subscribers, aggregate MB/s, from the log vs from memory;
 * - one reader through the host (SSE, disk log; and a reader of the binary stream) against the library reading the same executor directly
 *   (the host's own `Environment` in this process, `events$`), 100 MB each, MB/s of output bytes: the
 *   issue's goal ≥ 0.7×; the host's CPU per MB of output; and the same with the in-memory host (the
 *   host's own serving cost, without the log);
 * - the kernel's CPU per MB for writing fresh pages: 100 MB written to a new file in the data dir's file
 *   system against the same on tmpfs (`/dev/shm`), the cost under the log's writes that no code of ours
 *   can remove (on the bench VM, page-cache pages the host gave back cost a fault each when reused).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { lastValueFrom } from 'rxjs';
import { takeWhile } from 'rxjs/operators';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import type { BenchHost } from '../lib/host-harness';
import { cpuMsOfTree, HOST_ENV, Readers, startBenchHost } from '../lib/host-harness';
import { figure } from '../lib/report';
import type { Check, Row } from '../lib/report';
import { formatNumber, interleave, series, summarize } from '../lib/stats';
import type { Metrics } from '../lib/stats';
import { childTurn } from './host-memory';

const MiB = 1024 * 1024;
const PROCESSES = `/api/v1/environments/${HOST_ENV}/processes`;

async function json(response: Response): Promise<Record<string, unknown>> {
  if (!response.ok) throw new Error(`operator API answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/** Bytes of every file under `dir` (0 when it is gone). */
function bytesUnder(dir: string): number {
  let total = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const path = join(dir, name);
    const stat = statSync(path);
    total += stat.isDirectory() ? bytesUnder(path) : stat.size;
  }
  return total;
}

/**
 * The bytes of a process's log once written: the reader may see `closed` (served from memory) before the
 * log's last writes land, so wait (outside the measurement) until the files hold at least the output and
 * stop growing; at most 10 s.
 */
async function settledBytes(dir: string, output: number): Promise<number> {
  const deadline = performance.now() + 10_000;
  let last = -1;
  for (;;) {
    const now = bytesUnder(dir);
    if ((now >= output && now === last) || performance.now() > deadline) return now;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One turn: a process that waits for `go` on stdin, `subscribers` readers, then `bytes` of zeros. */
async function turn(bench: BenchHost, subscribers: number, bytes: number, dataDir: string | undefined, binary = false): Promise<Metrics> {
  const started = await json(await bench.api('POST', PROCESSES, { argv: ['sh', '-c', `read go; head -c ${bytes} /dev/zero`], pipeStdin: true }));
  const id = String(started['id']);
  const readers = new Readers(`${bench.host.url}${PROCESSES}/${id}/events`, bench.token, subscribers, binary);
  try {
    await readers.next();
    const cpu0 = process.cpuUsage();
    const executor0 = cpuMsOfTree(bench.executorPid);
    const t0 = performance.now();
    readers.go();
    await json(await bench.api('POST', `${PROCESSES}/${id}/stdin`, { writeId: 'go', data: Buffer.from('go\n').toString('base64') }));
    await bench.api('POST', `${PROCESSES}/${id}/stdin/end`);
    const done = await readers.next();
    const cpu = process.cpuUsage(cpu0);
    const wall = performance.now() - t0;
    const executorMs = cpuMsOfTree(bench.executorPid) - executor0;
    await readers.close();
    const written = dataDir === undefined ? 0 : await settledBytes(join(dataDir, 'processes', HOST_ENV, id), bytes);
    const seconds = (done['ms'] ?? 1) / 1000;
    return { mbps: (done['bytes'] ?? 0) / 1e6 / seconds, outputMbps: (bytes * subscribers) / 1e6 / seconds, cpuMsPerMB: (cpu.user + cpu.system) / 1000 / (bytes / 1e6), cpuMs: (cpu.user + cpu.system) / 1000, cpuShare: (cpu.user + cpu.system) / 1000 / wall, readerCores: (done['cpuMs'] ?? 0) / (done['ms'] ?? 1), executorCores: executorMs / wall, writtenPerByte: written / bytes };
  } finally {
    await readers.close();
    await bench.api('DELETE', `${PROCESSES}/${id}`);
  }
}

/**
 * One library turn on the host's own environment (the same executor and connection the host reads):
 * the same process, read through `events$` until closed; MB/s of output bytes from `go` to closed, and
 * the CPU of this process per MB (the library's decode and delivery, the host's bookkeeping of a process
 * it did not start: none).
 */
async function libraryTurn(bench: BenchHost, bytes: number): Promise<Metrics> {
  const { process: child } = await bench.environment.getExecBackend().start({ argv: ['sh', '-c', `read go; head -c ${bytes} /dev/zero`], cwd: '/', pipeStdin: true });
  try {
    let received = 0;
    const cpu0 = process.cpuUsage();
    const executor0 = cpuMsOfTree(bench.executorPid);
    const t0 = performance.now();
    const done = lastValueFrom(
      child.events$.pipe(takeWhile((event) => {
        if (event.type === 'output') received += event.chunk.byteLength;
        return event.type !== 'closed' && event.type !== 'failed';
      }, true)),
    );
    await child.write('go\n');
    const last = await done;
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    if (last.type !== 'closed' || received !== bytes) throw new Error(`the library turn ended ${last.type} after ${received} of ${bytes} bytes`);
    return { outputMbps: bytes / 1e6 / seconds, cpuMsPerMB: (cpu.user + cpu.system) / 1000 / (bytes / 1e6), cpuShare: (cpu.user + cpu.system) / 1000 / (seconds * 1000), executorCores: (cpuMsOfTree(bench.executorPid) - executor0) / (seconds * 1000) };
  } finally {
    child.release();
  }
}

/**
 * Writes `bytes` of fresh data to a new file in `dir` (1 MiB buffers, two per `writev`, no sync), then
 * removes it: the CPU of this process (the thread pool's system time included) per MB.
 */
async function pageCacheTurn(dir: string, bytes: number): Promise<Metrics> {
  const path = join(dir, `page-cache-${process.pid}.bin`);
  const buffers = [Buffer.alloc(MiB, 1), Buffer.alloc(MiB, 2)];
  const file = await open(path, 'w');
  try {
    const cpu0 = process.cpuUsage();
    for (let written = 0; written < bytes; written += 2 * MiB) await file.writev(buffers);
    const cpu = process.cpuUsage(cpu0);
    return { cpuMsPerMB: (cpu.user + cpu.system) / 1000 / (bytes / 1e6), sysMsPerMB: cpu.system / 1000 / (bytes / 1e6) };
  } finally {
    await file.close();
    rmSync(path, { force: true });
  }
}

/** The median of `key` over `turns`, formatted. */
const cores = (turns: readonly Metrics[], key: string): string => formatNumber(summarize(series(turns, key)).median);

/** The whole suite. */
export async function disklogSuite(context: BenchContext): Promise<Row[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-bench-disklog-'));
  // Released logs go first once the total passes 1 GiB: the turns' logs do not pile up.
  const disk = await startBenchHost(64 * MiB, { dataDir, totalBytes: 1024 * MiB });
  const memory = await startBenchHost(64 * MiB);
  const rows: Row[] = [];
  try {
    const bytes = sized(context, 100_000_000, 10_000_000);
    context.log(`  throughput: ${bytes / 1e6} MB to one reader, disk log vs in-memory history`);
    const one = await interleave({ raw: () => turn(memory, 1, bytes, undefined), rx: () => turn(disk, 1, bytes, dataDir), ctl: () => turn(memory, 1, bytes, undefined) }, { runs: context.runs, between: context.settle, log: context.log });
    rows.push(
      figure({
        suite: 'disklog',
        label: `${bytes / 1e6} MB through the host to one SSE reader, MB/s (raw column: in-memory history)`,
        unit: 'MB/s',
        raw: series(one.raw, 'mbps'),
        rx: series(one.rx, 'mbps'),
        ctl: series(one.ctl, 'mbps'),
        ratioGoal: { min: 0.9 },
        note: 'both hosts in the bench process, each with its own direct executor; the control pair is a second in-memory turn',
      }),
      figure({
        suite: 'disklog',
        label: `host CPU per ${bytes / 1e6} MB turn, ms (raw column: in-memory history)`,
        unit: 'ms',
        raw: series(one.raw, 'cpuMs'),
        rx: series(one.rx, 'cpuMs'),
        ctl: series(one.ctl, 'cpuMs'),
        note: 'user + system CPU of the bench process (the hosts) from go to the reader seeing closed; the executor and the reader run in other processes',
      }),
      figure({
        suite: 'disklog',
        label: 'host CPU share of one core during the turn (raw column: in-memory history)',
        unit: 'cores',
        raw: series(one.raw, 'cpuShare'),
        rx: series(one.rx, 'cpuShare'),
      }),
    );
    const written = summarize(series(one.rx, 'writtenPerByte'));
    rows.push({
      kind: 'check',
      suite: 'disklog',
      label: 'bytes the log wrote to disk per byte of output',
      value: `${written.median.toFixed(4)} [${written.min.toFixed(4)}–${written.max.toFixed(4)}]`,
      goal: 'reported (a 32-byte header per record of ≤ 8 KiB, indexes, manifest, meta)',
      met: written.min >= 1,
    } satisfies Check);

    const behind = sized(context, 100, 16);
    context.log(`  memory: one subscriber reading nothing while ${behind} MiB stream, fresh process per turn`);
    const memoryTurn = (storage: 'memory' | 'disk') => async (): Promise<Metrics> => ({ MiB: (await childTurn('stalled', 'rx', behind, storage)) / MiB });
    const stalled = await interleave({ raw: memoryTurn('memory'), rx: memoryTurn('disk') }, { runs: context.runs, between: context.settle, log: context.log });
    rows.push(
      figure({
        suite: 'disklog',
        label: `RSS growth over idle with one subscriber ${behind} MiB behind (raw column: in-memory host)`,
        unit: 'MiB',
        raw: series(stalled.raw, 'MiB'),
        rx: series(stalled.rx, 'MiB'),
        note: 'in-memory host: its 1 MiB send buffer ends the stalled stream; disk host: the stream stays open, the reader is served from the log later',
      }),
    );
    const growth = summarize(series(stalled.rx, 'MiB'));
    rows.push({
      kind: 'check',
      suite: 'disklog',
      label: `disk host RSS with one reader ${behind} MiB behind`,
      value: `idle + ${formatNumber(growth.median)} MiB [${formatNumber(growth.min)}–${formatNumber(growth.max)}]`,
      goal: '≤ idle + 32 MiB (median)',
      met: growth.median <= 32,
    } satisfies Check);

    const each = sized(context, 20_000_000, 2_000_000);
    context.log(`  fan-out: ${each / 1e6} MB to 10 readers, from the log vs from memory`);
    const ten = await interleave({ raw: () => turn(memory, 10, each, undefined), rx: () => turn(disk, 10, each, dataDir), ctl: () => turn(memory, 10, each, undefined) }, { runs: context.runs, between: context.settle, log: context.log });
    rows.push(
      figure({
        suite: 'disklog',
        label: `fan-out: one process (${each / 1e6} MB) to 10 SSE subscribers, aggregate MB/s (raw column: in-memory history)`,
        unit: 'MB/s',
        raw: series(ten.raw, 'mbps'),
        rx: series(ten.rx, 'mbps'),
        ctl: series(ten.ctl, 'mbps'),
      }),
    );

    context.log(`  one reader: ${bytes / 1e6} MB through the host (disk log) vs the library on the same executor`);
    const direct = await interleave({ raw: () => libraryTurn(disk, bytes), rx: () => turn(disk, 1, bytes, dataDir), ctl: () => libraryTurn(disk, bytes) }, { runs: context.runs, between: context.settle, log: context.log });
    rows.push(
      figure({
        suite: 'disklog',
        label: `one reader: ${bytes / 1e6} MB through the host (SSE, disk log) vs the library on the same executor, MB/s of output`,
        unit: 'MB/s',
        raw: series(direct.raw, 'outputMbps'),
        rx: series(direct.rx, 'outputMbps'),
        ctl: series(direct.ctl, 'outputMbps'),
        ratioGoal: { min: 0.7 },
        note: 'the library: the host\'s own Environment in this process reading events$; the host: one SSE reader in a child process; output bytes over the time from go to closed; the control pair is a second library turn',
      }),
      figure({
        suite: 'disklog',
        label: 'CPU of the bench process per MB of output: the host serving one SSE reader vs the library reading',
        unit: 'ms/MB',
        raw: series(direct.raw, 'cpuMsPerMB'),
        rx: series(direct.rx, 'cpuMsPerMB'),
      }),
      figure({
        suite: 'disklog',
        label: 'one reader: cores used by the bench process (the host, or the library) over the turn',
        unit: 'cores',
        raw: series(direct.raw, 'cpuShare'),
        rx: series(direct.rx, 'cpuShare'),
        note: `beside it, the executor with its processes: library turn ${cores(direct.raw, 'executorCores')}, host turn ${cores(direct.rx, 'executorCores')} cores; the SSE reader's process (host turn only) ${cores(direct.rx, 'readerCores')} cores; ${availableParallelism()} cores in all (medians)`,
      }),
    );

    context.log(`  one reader of the binary stream: ${bytes / 1e6} MB through the host (disk log) vs the library on the same executor`);
    const binary = await interleave(
      { raw: () => libraryTurn(disk, bytes), rx: () => turn(disk, 1, bytes, dataDir, true), ctl: () => libraryTurn(disk, bytes) },
      { runs: context.runs, between: context.settle, log: context.log },
    );
    rows.push(
      figure({
        suite: 'disklog',
        label: `one reader: ${bytes / 1e6} MB through the host (binary stream, disk log) vs the library on the same executor, MB/s of output`,
        unit: 'MB/s',
        raw: series(binary.raw, 'outputMbps'),
        rx: series(binary.rx, 'outputMbps'),
        ctl: series(binary.ctl, 'outputMbps'),
        ratioGoal: { min: 0.8 },
        note: 'as the SSE row above, the reader asking for application/vnd.exec-rx.events',
      }),
      figure({
        suite: 'disklog',
        label: 'CPU of the bench process per MB of output: the host serving one binary-stream reader vs the library reading',
        unit: 'ms/MB',
        raw: series(binary.raw, 'cpuMsPerMB'),
        rx: series(binary.rx, 'cpuMsPerMB'),
      }),
    );

    context.log(`  one reader: ${bytes / 1e6} MB through the host (in-memory history) vs the library on the same executor`);
    const inMemory = await interleave({ raw: () => libraryTurn(memory, bytes), rx: () => turn(memory, 1, bytes, undefined), ctl: () => libraryTurn(memory, bytes) }, { runs: context.runs, between: context.settle, log: context.log });
    rows.push(
      figure({
        suite: 'disklog',
        label: `one reader: ${bytes / 1e6} MB through the host (SSE, in-memory history) vs the library on the same executor, MB/s of output`,
        unit: 'MB/s',
        raw: series(inMemory.raw, 'outputMbps'),
        rx: series(inMemory.rx, 'outputMbps'),
        ctl: series(inMemory.ctl, 'outputMbps'),
        note: 'as the row above, the host keeping no log: what serving SSE costs without the disk',
      }),
    );

    if (existsSync('/dev/shm')) {
      const pages = bytes;
      context.log(`  the kernel: ${pages / 1e6} MB of fresh pages written to a file in the data dir vs on tmpfs`);
      const shm = mkdtempSync('/dev/shm/exec-rx-bench-');
      try {
        const kernel = await interleave({ raw: () => pageCacheTurn(shm, pages), rx: () => pageCacheTurn(dataDir, pages), ctl: () => pageCacheTurn(shm, pages) }, { runs: context.runs, between: context.settle, log: context.log });
        rows.push(
          figure({
            suite: 'disklog',
            label: `the kernel: CPU per MB writing ${pages / 1e6} MB to a new file, data dir's file system (raw column: tmpfs)`,
            unit: 'ms/MB',
            raw: series(kernel.raw, 'cpuMsPerMB'),
            rx: series(kernel.rx, 'cpuMsPerMB'),
            ctl: series(kernel.ctl, 'cpuMsPerMB'),
            note: 'writev of 1 MiB buffers from this process, no sync; user + system CPU (the thread pool included): the page-cache cost under every byte the log writes, beside the host\'s own work',
          }),
        );
      } finally {
        rmSync(shm, { recursive: true, force: true });
      }
    }
    return rows;
  } finally {
    await disk.close();
    await memory.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
