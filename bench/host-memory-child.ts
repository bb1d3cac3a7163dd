/**
 * One memory turn of the host bench, in a fresh `node --expose-gc` process (RSS after a GC does not
 * shrink back, so each turn needs its own process): prints `{"before":…,"after":…}` (RSS bytes after a
 * forced GC, before and after the holding) on stdout.
 *
 *   node --expose-gc dist/bench/host-memory-child.js idle|retained|stalled raw|rx COUNT [disk]
 *   (`disk`: the host keeps output logs in a temporary data dir, removed at the end)
 *   (HOST_MEMORY_DETAIL=1: each measurement's rss/heapTotal/heapUsed/external/arrayBuffers on stderr)
 *
 * - idle: COUNT open SSE streams (a process that prints nothing / a raw server's idle responses);
 * - retained: COUNT closed processes with 4 MiB of history each / the same bytes as 8 KiB Buffers;
 * - stalled: one subscriber reading nothing while COUNT MiB stream (host: its 1 MiB send buffer).
 *
 * Nothing in this process reads a stream: a whole stream read here (`fetch(...).text()`) left its
 * chunks and a string of the whole base64 body behind, garbage that the allocator then kept as RSS and
 * that was counted against the host (about 40 MiB of the retained turn, 70 MiB of the stalled one). In
 * the retained turn each process is read once to its `closed` by a late subscriber in the readers child
 * (`sse-readers.ts`): the host's replay and its frames count, the reader's memory does not. In the stalled
 * turn the only subscriber is the one reading nothing, as on the raw side: the end of the process is
 * awaited by polling its resource.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchHost } from './lib/host-harness';
import { HOST_ENV, RawSseServer, Readers, startBenchHost } from './lib/host-harness';
import { stopEverything } from './lib/executors';

const [mode = 'idle', side = 'rx', countText = '1', storage = 'memory'] = process.argv.slice(2);
const count = Number(countText);
const MiB = 1024 * 1024;
const PROCESSES = `/api/v1/environments/${HOST_ENV}/processes`;

const gc = (globalThis as { gc?: () => void }).gc ?? ((): void => undefined);
/** With HOST_MEMORY_DETAIL=1, each measurement's split (MiB) goes to stderr too. */
const detail = process.env['HOST_MEMORY_DETAIL'] === '1';
async function rss(): Promise<number> {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc();
  const usage = process.memoryUsage();
  if (detail) {
    const split = Object.entries(usage).map(([name, bytes]) => `${name} ${(bytes / MiB).toFixed(1)}`);
    process.stderr.write(`host memory child ${mode} ${side}: ${split.join(', ')}\n`);
  }
  return usage.rss;
}

async function start(bench: BenchHost, argv: readonly string[]): Promise<string> {
  const response = await bench.api('POST', PROCESSES, { argv });
  const body = (await response.json()) as { readonly id?: string };
  if (!response.ok || body.id === undefined) throw new Error(`start answered ${response.status}`);
  return body.id;
}

/** Resolves once a late subscriber in the readers child read the process's events to `closed`. */
async function readToClose(bench: BenchHost, id: string): Promise<void> {
  const reader = new Readers(`${bench.host.url}${PROCESSES}/${id}/events`, bench.token, 1);
  await reader.next(); // opened
  await reader.next(); // read to `closed`
  await reader.close();
}

/** Resolves once the process is closed, without subscribing to its events. */
async function closedByPolling(bench: BenchHost, id: string): Promise<void> {
  for (;;) {
    const response = await bench.api('GET', `${PROCESSES}/${id}`);
    const body = (await response.json()) as { readonly state?: string };
    if (!response.ok) throw new Error(`get process answered ${response.status}`);
    if (body.state === 'closed' || body.state === 'failed') return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function measure(): Promise<{ before: number; after: number }> {
  if (side === 'raw') {
    const raw = await RawSseServer.start();
    try {
      const warm = new Readers(raw.url, 'none', 5);
      await warm.next();
      await warm.close();
      const before = await rss();
      if (mode === 'idle') {
        const readers = new Readers(raw.url, 'none', count);
        await readers.next();
        const after = await rss();
        await readers.close();
        return { before, after };
      }
      if (mode === 'retained') {
        const held = Array.from({ length: count * 512 }, () => Buffer.alloc(8192, 1));
        const after = await rss();
        return { before, after: after + 0 * held.length };
      }
      const req = request(raw.url, { agent: false }, (res) => res.pause());
      req.on('error', () => undefined).end();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const chunk = Buffer.alloc(8192, 120);
      const sending = raw.send(Array.from({ length: (count * MiB) / 8192 }, () => chunk));
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const after = await rss();
      req.destroy();
      await sending;
      return { before, after };
    } finally {
      await raw.close();
    }
  }
  const dataDir = storage === 'disk' ? mkdtempSync(join(tmpdir(), 'exec-rx-bench-log-')) : undefined;
  const bench = await startBenchHost(MiB, dataDir === undefined ? undefined : { dataDir });
  try {
    // Warm up first (code compiled, pools grown, one process run): the growth is then what the holding costs.
    const sleeper = await start(bench, ['sleep', '3600']);
    const warm = new Readers(`${bench.host.url}${PROCESSES}/${sleeper}/events`, bench.token, 5);
    await warm.next();
    await warm.close();
    await readToClose(bench, await start(bench, ['head', '-c', String(4 * MiB), '/dev/zero']));
    const before = await rss();
    if (mode === 'idle') {
      const readers = new Readers(`${bench.host.url}${PROCESSES}/${sleeper}/events`, bench.token, count);
      await readers.next();
      const after = await rss();
      await readers.close();
      return { before, after };
    }
    if (mode === 'retained') {
      const ids: string[] = [];
      for (let i = 0; i < count; i += 1) ids.push(await start(bench, ['head', '-c', String(4 * MiB), '/dev/zero']));
      for (const id of ids) await readToClose(bench, id);
      return { before, after: await rss() };
    }
    const id = await start(bench, ['sh', '-c', `sleep 0.3; head -c ${count * MiB} /dev/zero`]);
    const req = request(`${bench.host.url}${PROCESSES}/${id}/events`, { headers: { authorization: `Bearer ${bench.token}` }, agent: false }, (res) => res.pause());
    req.on('error', () => undefined).end();
    await closedByPolling(bench, id);
    const after = await rss();
    req.destroy();
    return { before, after };
  } finally {
    await bench.close();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  }
}

measure().then(
  async (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    await stopEverything();
  },
  async (error: unknown) => {
    process.stderr.write(`host memory child: ${error instanceof Error ? error.message : String(error)}\n`);
    await stopEverything();
    process.exitCode = 1;
  },
);
