/**
 * 17. Previews (issue 42), `--only=preview`: what a server in the environment serves, read through the
 * host's preview listener (`GET {previewUrl}/{env}/{port}/…` with the operator token as Bearer) against
 * the library's own `Environment.fetch` (src/http/exec-fetch.ts) on the same executor and connection (the
 * host's Environment of it), side by side in one run:
 * - a host in this process (`startHostServer` with `previewPort: 0` and `operator.http.enabled`) and a real
 *   codex executor in direct mode joined to it (`--concurrent-requests C`);
 * - the server: python3's `http.server` (SimpleHTTPRequestHandler, HTTP/1.1, TCP_NODELAY, no request log) over a temp
 *   dir, started through the executor on 127.0.0.1 of the environment; its `ready PORT` line is awaited;
 * - `big`: one BIG_BYTES file read whole, MB/s (goal ≥ 0.8 × the library);
 * - `ttfb`: a 16-byte page, TTFB_REQUESTS requests one after another, the median time from sending to the
 *   first byte of the body, ms (goal ≤ 1.3 × the library);
 * - `rps`: a 1 KiB page, RPS_REQUESTS requests by CLIENTS concurrent clients, requests/s (reported, at
 *   `--concurrent-requests` 1 and 4; at 4 also with the host's `requestsInFlight` raised to 4).
 * The preview's clients are node:http with a keep-alive Agent (CLIENTS sockets, kept across turns): the
 * figures measure the host, not TCP setup. They run in this process, on the host's event loop: the preview
 * pays for its own client's HTTP parsing, the library for nothing but itself.
 * Each figure: paired runs (the library, the preview, the library again as the control), order rotating;
 * at most 5 runs (`--runs`), after one warm-up round (two for requests/s).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { firstValueFrom } from 'rxjs';
import { filter, map, take } from 'rxjs/operators';
import type { Environment } from '../../src';
import { spawnExecutor } from '../../src/executor/spawn-executor';
import { linesOf } from '../../src/exec/output-views';
import { OperatorTokens } from '../../src/host/api/operator-tokens';
import type { HostServer } from '../../src/host/host-options';
import { startHostServer } from '../../src/host/host-server';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { stopExecutor, trackExecutor } from '../lib/executors';
import { figure } from '../lib/report';
import type { Row } from '../lib/report';
import { interleave, median, series } from '../lib/stats';
import type { Metrics } from '../lib/stats';

const ENV = 'bench-preview';
/** Concurrent clients of the requests/s figure. */
const CLIENTS = 16;
const PAGE_BYTES = 1024;
/**
 * The server: SimpleHTTPRequestHandler over argv[1], HTTP/1.1 (keep-alive), silent; prints `ready PORT` once
 * bound. TCP_NODELAY on: it writes the head and the body apart, and with Nagle on the body of a small page
 * waits for the client's delayed ACK (~40 ms on Linux), which every figure then measured instead of the host.
 */
const SERVER_SCRIPT = `
import functools, http.server, sys
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    disable_nagle_algorithm = True
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(H, directory=sys.argv[1]))
server.daemon_threads = True
print('ready %d' % server.server_address[1], flush=True)
server.serve_forever()
`;

/** A host with previews on, its executor joined, the python server running in the environment. */
interface PreviewBench {
  readonly host: HostServer;
  readonly environment: Environment;
  /** `http://127.0.0.1:PORT` of the server, as the environment sees it. */
  readonly target: string;
  /** `{previewUrl}/{env}/{port}` of the same server. */
  readonly preview: string;
  readonly token: string;
  close(): Promise<void>;
}

async function startPreviewBench(dir: string, concurrentRequests: number, requestsInFlight?: number): Promise<PreviewBench> {
  const token = randomBytes(24).toString('base64url');
  const credentials = { accessKeyId: 'BENCHPREVIEW', secretAccessKey: randomBytes(24).toString('base64url') };
  const host = await startHostServer({
    credentials: new Map([[credentials.accessKeyId, credentials.secretAccessKey]]),
    previewPort: 0,
    operator: {
      tokens: new OperatorTokens([token]),
      requestsPerSecond: 1_000_000,
      requestBurst: 1_000_000,
      http: { enabled: true, ...(requestsInFlight === undefined ? {} : { requestsInFlight }) },
    },
  });
  const executor = trackExecutor(
    await spawnExecutor({ mode: 'direct', remoteUrl: host.url, environmentId: ENV, credentials, extraArgs: ['--concurrent-requests', String(concurrentRequests)] }).catch(async (error: unknown) => {
      await host.close();
      throw error;
    }),
  );
  try {
    const environment = await new Promise<Environment>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the bench executor did not join the host')), 20_000);
      const watching = host.environments$.subscribe((list) => {
        const joined = list.find((e) => e.id === ENV && e.state === 'connected')?.environment;
        if (joined === undefined) return;
        clearTimeout(timer);
        resolve(joined);
        queueMicrotask(() => watching.unsubscribe());
      });
    });
    const { process: server } = await environment.getExecBackend().start({ argv: ['python3', '-u', '-c', SERVER_SCRIPT, dir], cwd: dir });
    const port = await firstValueFrom(
      server.events$.pipe(
        linesOf('stdout'),
        map((line) => /^ready (\d+)$/.exec(line)?.[1]),
        filter((found): found is string => found !== undefined),
        take(1),
      ),
    );
    if (host.previewUrl === undefined) throw new Error('the host has no preview listener');
    return {
      host,
      environment,
      target: `http://127.0.0.1:${port}`,
      preview: `${host.previewUrl}/${ENV}/${port}`,
      token,
      close: async () => {
        await server.terminate().catch(() => undefined);
        await stopExecutor(executor);
        await host.close();
      },
    };
  } catch (error: unknown) {
    await stopExecutor(executor);
    await host.close();
    throw error;
  }
}

/** The host cut a preview response (its reader fell `bufferBytes` behind, preview-traffic.ts). */
class PreviewCut extends Error {}

/** One GET through the preview: resolves with the body's size and the ms to its first byte (or to the end of an empty one). */
function previewGet(url: string, agent: Agent, token: string): Promise<{ readonly bytes: number; readonly firstMs: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let bytes = 0;
      let firstMs = Number.NaN;
      res.on('data', (chunk: Buffer) => {
        if (bytes === 0) firstMs = performance.now() - started;
        bytes += chunk.byteLength;
      });
      res.once('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`the preview answered ${String(res.statusCode)}`));
        resolve({ bytes, firstMs: Number.isNaN(firstMs) ? performance.now() - started : firstMs });
      });
      res.once('error', reject);
      res.once('aborted', () => reject(new PreviewCut(`the preview cut ${url} after ${bytes} bytes`)));
    });
    request.once('error', reject);
  });
}

/** The same through the library's `Environment.fetch`. */
async function libraryGet(environment: Environment, url: string): Promise<{ readonly bytes: number; readonly firstMs: number }> {
  const started = performance.now();
  const response = await environment.fetch(url);
  if (response.status !== 200 || response.body === null) throw new Error(`the library's fetch answered ${response.status}`);
  const reader = response.body.getReader();
  let bytes = 0;
  let firstMs = Number.NaN;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (bytes === 0) firstMs = performance.now() - started;
    bytes += value.byteLength;
  }
  return { bytes, firstMs: Number.isNaN(firstMs) ? performance.now() - started : firstMs };
}

/** Runs `count` calls of `work` by `lanes` concurrent lanes; resolves with requests/s. */
async function perSecond(count: number, lanes: number, work: () => Promise<unknown>): Promise<number> {
  let left = count;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (left > 0) {
        left -= 1;
        await work();
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

/** The whole suite. */
export async function previewSuite(context: BenchContext): Promise<Row[]> {
  const bigBytes = sized(context, 100 * 1024 * 1024, 16 * 1024 * 1024);
  const ttfbRequests = sized(context, 40, 10);
  const rpsRequests = sized(context, CLIENTS * 50, CLIENTS * 10);
  const runs = context.quick ? context.runs : Math.min(context.runs, 5);
  const dir = mkdtempSync(join(tmpdir(), 'exec-rx-bench-preview-'));
  const block = randomBytes(1024 * 1024);
  const big = Buffer.alloc(bigBytes);
  for (let at = 0; at < bigBytes; at += block.byteLength) block.copy(big, at);
  writeFileSync(join(dir, 'big.bin'), big);
  writeFileSync(join(dir, 'page.html'), Buffer.alloc(PAGE_BYTES, 'a'));
  writeFileSync(join(dir, 'tiny.txt'), 'hello, preview!\n');
  const rows: Row[] = [];
  const mb = `${bigBytes / 1048576} MiB`;
  const settings: ReadonlyArray<{ readonly concurrent: number; readonly inFlight?: number; readonly all: boolean }> = [
    { concurrent: 1, all: true },
    { concurrent: 4, all: false },
    { concurrent: 4, inFlight: 4, all: false },
  ];
  try {
    for (const setting of settings) {
      const bench = await startPreviewBench(dir, setting.concurrent, setting.inFlight);
      const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
      const where = `--concurrent-requests ${setting.concurrent}, host requestsInFlight ${setting.inFlight ?? '2 (default)'}`;
      context.log(`  ${where}: server ${bench.target}, preview ${bench.preview}/`);
      try {
        const opts = { runs, warmup: 1, between: () => context.settle(), log: context.log };
        const read = (got: { readonly bytes: number }, expected: number): void => {
          if (got.bytes !== expected) throw new Error(`read ${got.bytes} bytes, expected ${expected}`);
        };
        if (setting.all) {
          const bigTurn = (get1: () => Promise<{ readonly bytes: number }>) => async (): Promise<Metrics> => {
            const started = performance.now();
            const got = await get1();
            read(got, bigBytes);
            return { mbps: bigBytes / 1e6 / ((performance.now() - started) / 1000) };
          };
          const libBig = bigTurn(() => libraryGet(bench.environment, `${bench.target}/big.bin`));
          // A cut turn (the host's bounded buffer, no flow control from the executor) is counted and taken again, at most 3 times.
          let cuts = 0;
          let bigTurns = 0;
          const prevBig = bigTurn(async () => {
            bigTurns += 1;
            for (let attempt = 1; ; attempt += 1) {
              try {
                return await previewGet(`${bench.preview}/big.bin`, agent, bench.token);
              } catch (error: unknown) {
                if (!(error instanceof PreviewCut) || attempt >= 3) throw error;
                cuts += 1;
                context.log(`    ${error.message}: taken again`);
              }
            }
          });
          const bigRuns = await interleave({ lib: libBig, preview: prevBig, libCtl: libBig }, opts);
          rows.push(
            figure({ suite: 'preview', label: `${mb} response read whole, MB/s: GET through the preview (raw column: the library's Environment.fetch, same executor; ${where})`, unit: 'MB/s', raw: series(bigRuns.lib, 'mbps'), rx: series(bigRuns.preview, 'mbps'), ctl: series(bigRuns.libCtl, 'mbps'), ratioGoal: { min: 0.8 } }),
            { kind: 'check', suite: 'preview', label: `${mb} preview reads the host cut (its reader, in this process, fell bufferBytes behind), each taken again`, value: `${cuts} cut in ${bigTurns} turns`, goal: '0', met: cuts === 0 },
          );
          const ttfbTurn = (get1: () => Promise<{ readonly bytes: number; readonly firstMs: number }>) => async (): Promise<Metrics> => {
            const times: number[] = [];
            for (let i = 0; i < ttfbRequests; i += 1) {
              const got = await get1();
              read(got, 16);
              times.push(got.firstMs);
            }
            return { ms: median(times) };
          };
          const libTtfb = ttfbTurn(() => libraryGet(bench.environment, `${bench.target}/tiny.txt`));
          const prevTtfb = ttfbTurn(() => previewGet(`${bench.preview}/tiny.txt`, agent, bench.token));
          const ttfbRuns = await interleave({ lib: libTtfb, preview: prevTtfb, libCtl: libTtfb }, opts);
          rows.push(
            figure({ suite: 'preview', label: `time to first body byte of a 16-byte page, ms (median of ${ttfbRequests} in a row per run; keep-alive): through the preview (raw column: the library's fetch; ${where})`, unit: 'ms', raw: series(ttfbRuns.lib, 'ms'), rx: series(ttfbRuns.preview, 'ms'), ctl: series(ttfbRuns.libCtl, 'ms'), ratioGoal: { max: 1.3 } }),
          );
        }
        const rpsTurn = (get1: () => Promise<{ readonly bytes: number }>) => async (): Promise<Metrics> => ({ rps: await perSecond(rpsRequests, CLIENTS, async () => read(await get1(), PAGE_BYTES)) });
        const libRps = rpsTurn(() => libraryGet(bench.environment, `${bench.target}/page.html`));
        const prevRps = rpsTurn(() => previewGet(`${bench.preview}/page.html`, agent, bench.token));
        // Two warm-up rounds: requests/s still climbs through the first (JIT, the executor's connections to the server).
        const rpsRuns = await interleave({ lib: libRps, preview: prevRps, libCtl: libRps }, { ...opts, warmup: 2 });
        rows.push(
          figure({ suite: 'preview', label: `1 KiB page, requests/s, ${CLIENTS} concurrent clients (${rpsRequests} requests per run; keep-alive Agent): through the preview (raw column: the library's fetch at the same concurrency; ${where})`, unit: 'req/s', raw: series(rpsRuns.lib, 'rps'), rx: series(rpsRuns.preview, 'rps'), ctl: series(rpsRuns.libCtl, 'rps') }),
        );
      } finally {
        agent.destroy();
        await bench.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
