/**
 * `GET …/log`'s reader (log-bytes) over a real OutputLog and a real HTTP server: the last N lines and
 * bytes of the selected streams agree with a plain reference for random chunkings (newlines on chunk
 * edges, lines across chunks, no newline at the end); the query's syntax; and a client that does not read
 * holds the reader: the log is read no further than what the socket takes, then all of it arrives
 * sha256-exact once the client reads.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { logSelectionOf, sendLogBytes } from '../../../src/host/api/log-bytes';
import { ApiProblem } from '../../../src/host/api/problem';
import { OutputLog } from '../../../src/store/disk/log/output-log';
import type { OutputEvent } from '../../../src/wire/process-event';
import { removeTempDirs, settle, SpyFs, tempDir } from '../../store/disk/log-support';

jest.setTimeout(60_000);

afterEach(removeTempDirs);

const output = (seq: number, chunk: Uint8Array | string, stream: OutputEvent['stream'] = 'stdout'): OutputEvent => ({
  type: 'output',
  seq,
  stream,
  chunk: typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk,
});

/** The last `n` lines of `text` (a last line without its newline counts), by splitting. */
function referenceTail(text: string, n: number): string {
  const lines = text.split('\n');
  const ended = text.endsWith('\n');
  if (ended || text === '') lines.pop();
  const kept = n === 0 ? [] : lines.slice(-n);
  return kept.length === 0 ? '' : `${kept.join('\n')}${ended ? '\n' : ''}`;
}

/** Serves `log` through `sendLogBytes` on a loopback port; `responses` are the server's side of each request. */
async function serve(log: OutputLog): Promise<{ server: Server; url: string; responses: ServerResponse[] }> {
  const responses: ServerResponse[] = [];
  const server = createServer((req, res) => {
    responses.push(res);
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    void sendLogBytes(req, res, log, logSelectionOf(query), {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, responses };
}

/** Closes `server` and every connection it has. */
function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
}

function fetchBytes(url: string): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    get(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('end', () => resolve(Buffer.concat(chunks)));
      res.once('error', reject);
    }).once('error', reject),
  );
}

describe('the /log reader', () => {
  it('gives the last N lines and bytes of the selected streams as a reference computes them, for random chunkings', async () => {
    const log = OutputLog.create(await tempDir(), 'tail');
    const text = { stdout: '', stderr: '' };
    const alphabet = 'ab\n\n';
    let seq = 0;
    for (let i = 0; i < 400; i += 1) {
      const stream = i % 3 === 0 ? 'stderr' : 'stdout';
      const length = Math.floor(Math.random() * 12);
      const chunk = Array.from({ length }, () => alphabet[Math.floor(Math.random() * alphabet.length)] ?? 'a').join('');
      if (chunk === '') continue;
      text[stream] += chunk;
      log.append(output(++seq, chunk, stream));
    }
    log.append(output(++seq, 'no newline', 'stdout'));
    text.stdout += 'no newline';
    const { server, url } = await serve(log);
    try {
      for (const n of [0, 1, 2, 3, 7, 50, 100_000]) {
        expect([n, (await fetchBytes(`${url}/?stream=stdout&tail=${n}`)).toString('latin1')]).toEqual([n, referenceTail(text.stdout, n)]);
        expect([n, (await fetchBytes(`${url}/?stream=stderr&tail=${n}`)).toString('latin1')]).toEqual([n, referenceTail(text.stderr, n)]);
        expect([n, (await fetchBytes(`${url}/?stream=stderr&tail=${n}b`)).toString('latin1')]).toEqual([n, n === 0 ? '' : text.stderr.slice(-n)]);
      }
    } finally {
      await close(server);
      await log.close();
    }
  });

  it('parses stream, tail and since, and refuses what is out of their syntax', () => {
    const of = (query: string): unknown => {
      const selection = logSelectionOf(new URLSearchParams(query));
      return { streams: [...selection.streams].sort(), tail: selection.tail, since: selection.since };
    };
    expect(of('')).toEqual({ streams: ['pty', 'stderr', 'stdout'], tail: undefined, since: undefined });
    expect(of('stream=stdout,pty&stream=stdout&tail=10&since=1700000000000')).toEqual({ streams: ['pty', 'stdout'], tail: { lines: 10 }, since: 1_700_000_000_000 });
    expect(of('tail=4096b&since=2026-12-01T16:00:00.5%2B01:00')).toEqual({ streams: ['pty', 'stderr', 'stdout'], tail: { bytes: 4096 }, since: Date.UTC(2026, 11, 1, 15, 0, 0, 500) });
    for (const query of ['stream=', 'stream=out', 'tail=', 'tail=01', 'tail=1.5', 'tail=b', 'tail=1000001', 'since=', 'since=2026-12-01', 'since=-5', 'since=1&since=2']) {
      expect([query, (() => {
        try {
          logSelectionOf(new URLSearchParams(query));
          return 'accepted';
        } catch (error: unknown) {
          return error instanceof ApiProblem ? error.status : 'other';
        }
      })()]).toEqual([query, 400]);
    }
  });

  it('reads the log only as fast as the client takes it, and gives all of it once the client reads', async () => {
    const fs = new SpyFs();
    const dir = await tempDir();
    const writer = OutputLog.create(dir, 'slow', { fs });
    const data = randomBytes(48 * 1024 * 1024);
    for (let at = 0, seq = 1; at < data.byteLength; seq += 1, at += 64 * 1024) {
      if (!writer.append(output(seq, data.subarray(at, at + 64 * 1024)))) await writer.whenBelowLowMark();
    }
    await writer.close();
    const log = await OutputLog.open(dir, 'slow', { fs });
    const { server, url, responses } = await serve(log);
    const readBytes = (): number => fs.reads.reduce((sum, read) => sum + read.length, 0);
    const beforeRequest = readBytes();
    const response = await new Promise<IncomingMessage>((resolve) => get(url, resolve));
    try {
      response.pause();
      // The client takes nothing: the socket's buffers fill and the server's response asks for `drain`,
      // the one thing the reader then waits for. A read already in flight lands within a few turns.
      await settle(() => responses[0]?.writableNeedDrain === true);
      expect(responses[0]?.writableNeedDrain).toBe(true);
      await settle(undefined, 200);
      const whilePaused = readBytes() - beforeRequest;
      await settle(undefined, 5_000);
      // It stopped: nothing more was read in 5000 turns of the event loop, and far less than the log was.
      expect({ later: readBytes() - beforeRequest, bounded: whilePaused < data.byteLength / 2 }).toEqual({ later: whilePaused, bounded: true });
      const hash = createHash('sha256');
      const ended = new Promise<void>((resolve) => response.once('end', resolve));
      response.on('data', (chunk: Buffer) => hash.update(chunk));
      response.resume();
      await ended;
      expect(hash.digest('hex')).toBe(createHash('sha256').update(data).digest('hex'));
    } finally {
      response.destroy();
      await close(server);
      await log.close();
    }
  });
});
