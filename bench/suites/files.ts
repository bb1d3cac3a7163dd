/**
 * 16. Files (issue 41), `--only=files`: one file of FILE_BYTES (1 GiB; 64 MiB with `--quick`) in the
 * executors' temp dir, read and written every way the host offers, side by side in one run:
 * - `bare`: the anchor, a bare pipelined reader of `fs/readBlock` on the raw `ws` client (`../lib/raw-client.ts`):
 *   `fs/open`, then IN_FLIGHT blocks of 1 MiB always outstanding, base64-decoded and counted;
 * - `lib`: the library's streamed read (`RemoteFileSystem.readStream`, the same IN_FLIGHT) on the same
 *   listening executor, and its streamed write (`writeStream`) of the same bytes;
 * - `download`: `GET …/files/content` of the built `exec-rx host` (a child process, `../lib/cli-host.ts`,
 *   its executor joined in direct mode), read by a plain `fetch` reader; `upload`: `PUT` of the same
 *   bytes from a stream; each against the library's read or write;
 * - `cat`: `cat FILE > /dev/null` on this machine, the floor;
 * - the host's RSS (VmRSS of its process, sampled every 50 ms) during each download and upload, against
 *   its idle RSS before the suite;
 * - `exec-rx cp -r` of a tree of TREE_FILES files of 4 KiB each, up and down, files/s, against the library
 *   copying the same tree with the same concurrency (CP_PARALLEL files in flight: `writeFile`, `readFile`).
 * Goals (issue 41): lib ≥ 0.9 × bare; download ≥ 0.8 × lib read; upload ≥ 0.8 × lib write; host RSS ≤
 * idle + 64 MiB; cp ≥ 0.8 × the library, both ways. Run counts are fixed below, whatever `--runs` says: 3 paired runs of the bytes (after one warm-up),
 * 2 of the trees (a 5,000-file upload through the host takes minutes: see docs/operator-api.md#files).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { lastValueFrom } from 'rxjs';
import { reduce } from 'rxjs/operators';
import { EnvironmentManager } from '../../src';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { CLI, CLI_HOST_ENV, cleanEnv, startCliHost } from '../lib/cli-host';
import type { CliHost } from '../lib/cli-host';
import { startListening, stopExecutor } from '../lib/executors';
import { RawClient } from '../lib/raw-client';
import { figure } from '../lib/report';
import type { Check, Row } from '../lib/report';
import { formatNumber, interleave, series, summarize } from '../lib/stats';
import type { Metrics } from '../lib/stats';

/** Paired runs of the byte figures, and of the tree figures (fixed before measuring). */
const RUNS = 3;
const TREE_RUNS = 2;
/** Blocks of 1 MiB in flight, for the bare reader and the library alike. */
const IN_FLIGHT = 4;
const BLOCK = 1024 * 1024;
/** Files in flight for `exec-rx cp` and for the library's copy of the same tree. */
const CP_PARALLEL = 8;
const TREE_FILE_BYTES = 4096;

const mbps = (bytes: number, ms: number): number => bytes / 1e6 / (ms / 1000);

/** VmRSS of `pid` in bytes (0 once it is gone). */
function rssOf(pid: number): number {
  try {
    const line = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return line === null ? 0 : Number(line[1]) * 1024;
  } catch {
    return 0;
  }
}

/** Runs `body` while sampling `pid`'s RSS every 50 ms; resolves with its result and the peak. */
async function withPeakRss<T>(pid: number, body: () => Promise<T>): Promise<{ readonly value: T; readonly peak: number }> {
  let peak = rssOf(pid);
  const sampler = setInterval(() => void (peak = Math.max(peak, rssOf(pid))), 50);
  try {
    const value = await body();
    peak = Math.max(peak, rssOf(pid));
    return { value, peak };
  } finally {
    clearInterval(sampler);
  }
}

/** The bare pipelined reader: `fs/open`, IN_FLIGHT `fs/readBlock`s always outstanding, in order. */
async function bareRead(client: RawClient, path: string, handleId: string): Promise<number> {
  await client.request('fs/open', { handleId, path: `file://${path}`, mode: 'read' });
  let next = 0;
  let total = 0;
  let done = false;
  const queue: Promise<{ chunk: string; eof: boolean }>[] = [];
  const ask = (): void => {
    queue.push(client.request('fs/readBlock', { handleId, offset: next, len: BLOCK }) as Promise<{ chunk: string; eof: boolean }>);
    next += BLOCK;
  };
  for (let i = 0; i < IN_FLIGHT; i += 1) ask();
  while (!done) {
    const head = queue.shift();
    if (head === undefined) break;
    const block = await head;
    const bytes = Buffer.from(block.chunk, 'base64').byteLength;
    total += bytes;
    if (block.eof || bytes < BLOCK) done = true;
    else ask();
  }
  await Promise.allSettled(queue);
  await client.request('fs/close', { handleId });
  return total;
}

/** A Readable of `bytes` bytes of one reused pseudo-random block (what an upload sends). */
function sourceOf(bytes: number, block: Buffer): Readable {
  let left = bytes;
  return new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const n = Math.min(left, block.byteLength);
      left -= n;
      this.push(n === block.byteLength ? block : block.subarray(0, n));
    },
  });
}

/** Async iterable form of {@link sourceOf} for the library's streamed write. */
async function* chunksOf(bytes: number, block: Buffer): AsyncGenerator<Uint8Array> {
  for (let left = bytes; left > 0; left -= block.byteLength) yield left >= block.byteLength ? block : block.subarray(0, left);
}

/** Runs the built cli with `args`; resolves with its wall time; rejects on a non-zero exit. */
function runCli(host: CliHost, args: readonly string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...cleanEnv(), EXEC_RX_HOST: host.url, EXEC_RX_TOKEN: host.token }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => void (stderr += text));
    child.once('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`exec-rx ${args.join(' ')} exited ${String(code)}: ${stderr.slice(-400)}`))));
  });
}

/** Runs `work` over `items`, `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++];
      if (item !== undefined) await work(item);
    }
  });
  await Promise.all(lanes);
}

const cell = (values: readonly number[]): string => {
  const s = summarize(values);
  return `${formatNumber(s.median)} [${formatNumber(s.min)}–${formatNumber(s.max)}]`;
};

/** The whole suite. */
export async function filesSuite(context: BenchContext): Promise<Row[]> {
  const fileBytes = sized(context, 1024 * 1024 * 1024, 64 * 1024 * 1024);
  const treeFiles = sized(context, 5000, 500);
  const runs = context.quick ? context.runs : RUNS;
  const work = mkdtempSync(join(tmpdir(), 'exec-rx-bench-files-'));
  const file = join(work, 'one.bin');
  const block = Buffer.alloc(BLOCK);
  for (let i = 0; i < BLOCK; i += 32) createHash('sha256').update(String(i)).digest().copy(block, i);
  const listening = await startListening();
  const rows: Row[] = [];
  try {
    // The file, written once by this machine (the executors share it).
    await new Promise<void>((resolve, reject) => {
      const child = spawn('sh', ['-c', `head -c ${fileBytes} /dev/urandom > '${file}'`], { stdio: 'ignore' });
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`head exited ${String(code)}`))));
    });
    // The token's rate limit (100/s by default) would bound cp at 100 files/s: raised, so the figure shows the path's own cost.
    const host = await startCliHost(work, ['--api-rate', '1000000']);
    const manager = await EnvironmentManager.connect('bench-files', listening.url, { clientName: 'bench-rx', keepalive: false });
    const raw = await RawClient.dial(listening.url, { ackPong: false });
    try {
      const environment = manager.defaultEnvironment();
      if (environment === undefined) throw new Error('no default environment');
      const fs = environment.getFilesystem();
      const idleRss = rssOf(host.pid);
      let handles = 0;
      let uploads = 0;
      const contentUrl = (path: string): string => `${host.url}/api/v1/environments/${CLI_HOST_ENV}/files/content?path=${encodeURIComponent(path)}`;
      const auth = { authorization: `Bearer ${host.token}` };
      context.log(`  ${fileBytes / 1048576} MiB file; the host at ${host.url} (idle RSS ${formatNumber(idleRss / 1048576)} MiB)`);
      const timed = async (bytes: () => Promise<number>): Promise<Metrics> => {
        const started = performance.now();
        const n = await bytes();
        if (n !== fileBytes) throw new Error(`read ${n} bytes, expected ${fileBytes}`);
        return { mbps: mbps(n, performance.now() - started) };
      };
      const bare = (): Promise<Metrics> => timed(() => bareRead(raw, file, `bench-bare-${(handles += 1)}`));
      const libRead = (): Promise<Metrics> =>
        timed(() => lastValueFrom(fs.readStream(file, { inFlight: IN_FLIGHT }).pipe(reduce((n, chunk) => n + chunk.byteLength, 0)), { defaultValue: 0 }));
      const download = async (): Promise<Metrics> => {
        const { value, peak } = await withPeakRss(host.pid, () =>
          timed(async () => {
            const response = await fetch(contentUrl(file), { headers: auth });
            if (response.status !== 200 || response.body === null) throw new Error(`download answered ${response.status}`);
            let n = 0;
            for await (const chunk of response.body) n += (chunk as Uint8Array).byteLength;
            return n;
          }),
        );
        return { ...value, rssMiB: (peak - idleRss) / 1048576 };
      };
      const libWrite = (): Promise<Metrics> => timed(() => fs.writeStream(join(work, `lib-${(uploads += 1)}.bin`), chunksOf(fileBytes, block)));
      const upload = async (): Promise<Metrics> => {
        const target = join(work, `up-${(uploads += 1)}.bin`);
        const { value, peak } = await withPeakRss(host.pid, () =>
          timed(async () => {
            const init = { method: 'PUT', headers: { ...auth, 'content-type': 'application/octet-stream', 'content-length': String(fileBytes) }, body: sourceOf(fileBytes, block), duplex: 'half' } as unknown as RequestInit;
            const response = await fetch(contentUrl(target), init).catch((error: unknown) => {
              throw new Error(`the upload failed: ${String((error as { cause?: unknown }).cause ?? error)}`);
            });
            const answer = await response.text();
            if (response.status !== 201 && response.status !== 200) throw new Error(`upload answered ${response.status}: ${answer.slice(0, 300)}`);
            if (response.status !== 201 && response.status !== 200) throw new Error(`upload answered ${response.status}`);
            return fileBytes;
          }),
        );
        rmSync(target, { force: true });
        return { ...value, rssMiB: (peak - idleRss) / 1048576 };
      };
      const cat = (): Promise<Metrics> =>
        timed(
          () =>
            new Promise((resolve, reject) => {
              const child = spawn('sh', ['-c', `cat '${file}' > /dev/null`], { stdio: 'ignore' });
              child.once('exit', (code) => (code === 0 ? resolve(fileBytes) : reject(new Error(`cat exited ${String(code)}`))));
            }),
        );
      const clean = (): void => {
        for (const name of readdirSync(work)) if (/^(lib|up)-\d+\.bin$/.test(name)) rmSync(join(work, name), { force: true });
      };
      const byteRuns = await interleave(
        { bare, bareCtl: bare, libRead, download, libWrite, upload, cat },
        { runs, warmup: 1, between: async () => (clean(), await context.settle()), log: context.log },
      );
      const mb = `${fileBytes / 1048576} MiB`;
      rows.push(
        figure({ suite: 'files', label: `${mb} read, MB/s: the library's readStream (raw column: a bare pipelined fs/readBlock reader)`, unit: 'MB/s', raw: series(byteRuns.bare, 'mbps'), rx: series(byteRuns.libRead, 'mbps'), ctl: series(byteRuns.bareCtl, 'mbps'), ratioGoal: { min: 0.9 } }),
        figure({ suite: 'files', label: `${mb} download through the host, MB/s: GET …/files/content by fetch (raw column: the library's readStream)`, unit: 'MB/s', raw: series(byteRuns.libRead, 'mbps'), rx: series(byteRuns.download, 'mbps'), ratioGoal: { min: 0.8 } }),
        figure({ suite: 'files', label: `${mb} upload through the host, MB/s: PUT …/files/content by fetch (raw column: the library's writeStream)`, unit: 'MB/s', raw: series(byteRuns.libWrite, 'mbps'), rx: series(byteRuns.upload, 'mbps'), ratioGoal: { min: 0.8 } }),
      );
      const rssCheck = (label: string, values: readonly number[]): Check => ({
        kind: 'check',
        suite: 'files',
        label: `host RSS over idle during each ${label}, MiB (goal ≤ 64)`,
        value: cell(values),
        goal: '≤ 64 MiB',
        met: Math.max(...values) <= 64,
      });
      rows.push(rssCheck('download', series(byteRuns.download, 'rssMiB')), rssCheck('upload', series(byteRuns.upload, 'rssMiB')));
      rows.push({ kind: 'check', suite: 'files', label: `${mb}: cat FILE > /dev/null on this machine, MB/s (the floor)`, value: cell(series(byteRuns.cat, 'mbps')), goal: 'reported', met: true });

      // The tree: TREE_FILES files of 4 KiB, up with `exec-rx cp -r` and with the library, then down.
      const local = join(work, 'tree');
      mkdirSync(local);
      const names = Array.from({ length: treeFiles }, (_, i) => `f${String(i).padStart(5, '0')}.bin`);
      for (const name of names) writeFileSync(join(local, name), block.subarray(0, TREE_FILE_BYTES));
      let trees = 0;
      const remote = (): string => join(work, `remote-${(trees += 1)}`);
      const filesPerSecond = (ms: number): Metrics => ({ fps: treeFiles / (ms / 1000) });
      const cpUp = async (): Promise<Metrics> => filesPerSecond(await runCli(host, ['cp', '--parallel', String(CP_PARALLEL), local, `${CLI_HOST_ENV}:${remote()}`]));
      const libUp = async (): Promise<Metrics> => {
        const target = remote();
        const started = performance.now();
        await fs.createDirectory(target);
        await pool(names, CP_PARALLEL, async (name) => fs.writeFile(join(target, name), readFileSync(join(local, name))));
        return filesPerSecond(performance.now() - started);
      };
      const source = join(work, 'remote-source');
      rmSync(source, { recursive: true, force: true });
      mkdirSync(source);
      for (const name of names) writeFileSync(join(source, name), block.subarray(0, TREE_FILE_BYTES));
      const cpDown = async (): Promise<Metrics> => filesPerSecond(await runCli(host, ['cp', '--parallel', String(CP_PARALLEL), `${CLI_HOST_ENV}:${source}`, remote()]));
      const libDown = async (): Promise<Metrics> => {
        const target = remote();
        const started = performance.now();
        mkdirSync(target);
        const entries = await fs.readDirectory(source);
        await pool(entries, CP_PARALLEL, async (entry) => writeFileSync(join(target, entry.fileName), await fs.readFile(join(source, entry.fileName))));
        return filesPerSecond(performance.now() - started);
      };
      const cleanTrees = (): void => {
        for (const name of readdirSync(work)) if (/^remote-\d+$/.test(name)) rmSync(join(work, name), { recursive: true, force: true });
      };
      const treeRuns = await interleave({ cpUp, libUp, cpDown, libDown }, { runs: context.quick ? context.runs : TREE_RUNS, warmup: 0, between: async () => (cleanTrees(), await context.settle()), log: context.log });
      rows.push(
        figure({ suite: 'files', label: `exec-rx cp -r of ${treeFiles} files of 4 KiB up, files/s (raw column: the library's writeFile, ${CP_PARALLEL} in flight)`, unit: 'files/s', raw: series(treeRuns.libUp, 'fps'), rx: series(treeRuns.cpUp, 'fps'), ratioGoal: { min: 0.8 } }),
        figure({ suite: 'files', label: `exec-rx cp -r of ${treeFiles} files of 4 KiB down, files/s (raw column: the library's readFile, ${CP_PARALLEL} in flight)`, unit: 'files/s', raw: series(treeRuns.libDown, 'fps'), rx: series(treeRuns.cpDown, 'fps'), ratioGoal: { min: 0.8 } }),
      );
    } finally {
      raw.close();
      await manager.close();
      await host.close();
    }
  } finally {
    await stopExecutor(listening);
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}
