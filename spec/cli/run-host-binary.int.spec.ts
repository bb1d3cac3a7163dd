/**
 * `exec-rx run --host`, the built cli, takes a process's events as the binary stream: 200 MB
 * (`yes | head -c 200000000`) arrive sha256-exact through a proxy that cuts the HTTP connection 5 times
 * (each cut anywhere: inside a frame's header, its chunk, the response head), into a reader slower than
 * the command (throttled to 25 MB/s: it takes 1.25 MB, then pauses the cli's stdout for one 50 ms tick;
 * that wait is the slow consumer being measured, not a wait for an event). The host keeps output on disk,
 * so it reads the log at the reader's pace and never cuts it for being slow. Every event stream the cli
 * opened was answered binary, and every reconnect resumed after what had come.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SseHost } from '../host/sse/sse-setup';
import { startSseHost, within } from '../host/sse/sse-setup';
import { startSseProxy } from '../support/sse-proxy';
import { yesDigest } from '../support/yes-digest';
import { CLI, killIfRunning, readThrottled } from './cli-process';

jest.setTimeout(240_000);

const ENV = 'cli-run-host-binary';
const TOTAL = 200_000_000;
const TICK_MS = 50;
const PER_TICK = 1_250_000; // 25 MB/s
const CUTS = [7_000_000, 45_000_000, 90_000_000, 140_000_000, 185_000_000];

describe('exec-rx run --host over the binary event stream', () => {
  let setup: SseHost;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-binary-'));
    setup = await startSseHost({ environmentId: ENV, outputLog: { dataDir } });
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('delivers 200 MB sha256-exact through 5 cuts of its connection into a reader slower than the command', async () => {
    const proxy = await startSseProxy(Number(new URL(setup.origin).port));
    proxy.cutAt(CUTS);
    const cli = spawn(process.execPath, [CLI, 'run', '--host', proxy.origin, '--environment', ENV, '--', 'sh', '-c', `yes | head -c ${TOTAL}`], {
      env: { ...process.env, EXEC_RX_TOKEN: setup.token, EXEC_RX_HOST: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => cli.once('close', (code) => resolve(code)));
    let stderr = '';
    cli.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    try {
      const read = readThrottled(cli.stdout, PER_TICK, TICK_MS);
      const code = await within(exited, 230_000, 'the cli to exit');
      expect({ code, received: read.received, stderr }).toEqual({ code: 0, received: TOTAL, stderr: '' });
      expect(read.digest()).toBe(yesDigest(TOTAL));
      expect(proxy.cuts).toBe(5);
      const streams = proxy.log.filter((r) => r.path.endsWith('/events'));
      // Every cut closes its connection (a kept-alive one, as the start's, may carry the first stream
      // without its own log entry): at least 6 connections, 5 of them ended by a cut.
      expect(proxy.log.length).toBeGreaterThanOrEqual(6);
      expect(proxy.log.filter((r) => r.end === 'cut')).toHaveLength(5);
      expect([...new Set(streams.filter((r) => r.status === 200).map((r) => r.contentType))]).toEqual(['application/vnd.exec-rx.events']);
      // Each reconnect resumed after what had come: strictly later resume points.
      const afters = streams.map((r) => r.after ?? 0);
      expect(afters.slice(1).every((after, i) => after >= (afters[i] ?? 0))).toBe(true);
      expect(afters.filter((after) => after > 0).length).toBeGreaterThanOrEqual(4);
    } finally {
      await killIfRunning(cli);
      await proxy.close();
    }
  });
});
