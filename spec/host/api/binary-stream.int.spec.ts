/**
 * The binary event stream against a real host and a real codex executor: content negotiation on the
 * events route (only a request that names the media type gets it, `Vary: Accept` either way, errors stay
 * problem+json, HEAD; curl as it is gets SSE), the same events as SSE (HostClient by default, and with `binaryEvents`), resume by
 * `after` over `Last-Event-ID`, the ping, a revoked token's notice, the come-back frame of a host that
 * stops, and the cut at the send buffer's bound, at a frame boundary.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { lastValueFrom, toArray } from 'rxjs';
import type { HostProcessEvent } from '../../../src/client';
import { HostClient } from '../../../src/client';
import type { BinaryFrame } from '../../../src/client/binary-reader';
import { BinaryFrameDecoder } from '../../../src/client/binary-reader';
import { OperatorTokens } from '../../../src/host/api/operator-tokens';
import type { ProcessResource } from '../../../src/wire/operator-api';
import { paths, within } from './api-client';
import type { ApiHost } from './api-host';
import { b64, expectProblem, finished, OPERATOR_TOKEN, startApiHost, startProcess } from './api-host';

const MEDIA = 'application/vnd.exec-rx.events';
const SECOND_TOKEN = 'binary-spec-second-token-do-not-print';
const TOKENS = [
  { name: 'ops', secret: OPERATOR_TOKEN },
  { name: 'second', secret: SECOND_TOKEN },
] as const;

/** A raw binary stream: its headers, the frames so far, and its end. */
interface RawStream {
  readonly res: IncomingMessage;
  readonly frames: BinaryFrame[];
  readonly decoder: BinaryFrameDecoder;
  /** Resolves once a frame matching `match` came (or rejects after 20 s). */
  next(match: (frame: BinaryFrame) => boolean, what: string): Promise<BinaryFrame>;
  /** Resolves when the body ended (whole or not). */
  readonly ended: Promise<void>;
  close(): void;
}

function open(base: string, path: string, headers: Record<string, string>, token = OPERATOR_TOKEN): Promise<RawStream> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, headers: { authorization: `Bearer ${token}`, ...headers }, agent: false });
    req.once('error', reject);
    req.once('response', (res) => {
      const frames: BinaryFrame[] = [];
      const decoder = new BinaryFrameDecoder();
      const waiters: (() => void)[] = [];
      const binary = res.headers['content-type'] === MEDIA;
      res.on('data', (chunk: Buffer) => {
        if (!binary) return;
        decoder.push(new Uint8Array(chunk));
        for (let f = decoder.next(); f !== undefined; f = decoder.next()) frames.push(f);
        for (const wake of waiters.splice(0)) wake();
      });
      const ended = new Promise<void>((done) => {
        res.once('end', done);
        res.once('close', done);
      });
      const next = (match: (frame: BinaryFrame) => boolean, what: string): Promise<BinaryFrame> =>
        within(
          new Promise<BinaryFrame>((found) => {
            const look = (): void => {
              const frame = frames.find(match);
              if (frame !== undefined) found(frame);
              else waiters.push(look);
            };
            look();
          }),
          20_000,
          what,
        );
      resolve({ res, frames, decoder, next, ended, close: () => req.destroy() });
    });
    req.end();
  });
}

/** The events a HostClient gets, and the content types its stream answers came with. */
async function clientEvents(host: ApiHost, processId: string, binaryEvents: boolean): Promise<{ events: HostProcessEvent[]; types: string[]; accepts: string[] }> {
  const types: string[] = [];
  const accepts: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (String(input).includes('/events')) {
      types.push(response.headers.get('content-type') ?? '');
      accepts.push(new Headers(init?.headers).get('accept') ?? '');
    }
    return response;
  };
  const client = new HostClient({ url: host.host.url, token: OPERATOR_TOKEN, fetch: recording, ...(binaryEvents ? { binaryEvents } : {}) });
  const events = await lastValueFrom(client.events$(host.environmentId, processId).pipe(toArray()));
  return { events, types, accepts };
}

const seqOf = (frame: BinaryFrame): number | undefined => (frame.kind === 'output' ? frame.output.seq : undefined);

describe('operator API: the binary event stream', () => {
  const ENV = 'binary-spec';
  let setup: ApiHost;
  let done: ProcessResource;

  beforeAll(async () => {
    setup = await startApiHost({ environmentId: ENV, tokens: TOKENS, operator: { sse: { pingMs: 200 } } });
    done = await startProcess(setup.api, ENV, { argv: ['sh', '-c', 'for i in 1 2 3 4 5; do echo "line $i"; echo "err $i" >&2; done; exit 3'] });
    await finished(setup.api, ENV, done.id);
  });

  it.each([
    ['no Accept', undefined, 'text/event-stream; charset=utf-8'],
    ['*/* (curl)', '*/*', 'text/event-stream; charset=utf-8'],
    ['text/event-stream (a browser)', 'text/event-stream', 'text/event-stream; charset=utf-8'],
    ['application/*', 'application/*', 'text/event-stream; charset=utf-8'],
    ['the media type', MEDIA, MEDIA],
    ['the media type before SSE', `${MEDIA}, text/event-stream;q=0.5`, MEDIA],
    ['SSE preferred', `text/event-stream, ${MEDIA};q=0.5`, 'text/event-stream; charset=utf-8'],
    ['the media type refused', `${MEDIA};q=0, */*`, 'text/event-stream; charset=utf-8'],
  ])('answers %s with the right framing and Vary: Accept, on GET and HEAD', async (_name, accept, type) => {
    const headers: Record<string, string> = accept === undefined ? {} : { accept };
    const head = await setup.api.request('HEAD', paths.events(ENV, done.id), { headers });
    const get = await open(setup.host.url, `${paths.events(ENV, done.id)}?after=0`, headers);
    await get.ended;
    expect([head.status, head.headers['content-type'], head.headers['vary'], head.text]).toEqual([200, type, 'accept', '']);
    expect([get.res.statusCode, get.res.headers['content-type'], get.res.headers['vary']]).toEqual([200, type, 'accept']);
  });

  it('gives curl, as it is (Accept: */*), the SSE stream', async () => {
    // The token goes in on stdin (`-H @-`), not in curl's argv.
    const curl = spawn('curl', ['-sS', '-i', '--max-time', '20', '-H', '@-', `${setup.host.url}${paths.events(ENV, done.id)}`], { stdio: ['pipe', 'pipe', 'pipe'] });
    curl.stdin.end(`Authorization: Bearer ${OPERATOR_TOKEN}\n`);
    let out = '';
    curl.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
    const code = await within(new Promise<number | null>((resolve) => curl.once('close', resolve)), 30_000, 'curl to end');
    const [head = '', body = ''] = out.split('\r\n\r\n');
    expect([code, /^content-type: text\/event-stream; charset=utf-8$/im.test(head), /^vary: accept$/im.test(head)]).toEqual([0, true, true]);
    // Seq 1 first; `exited` may come before the last output (docs/protocol.md#sequence-numbers).
    expect(body).toMatch(/^id: 1\nevent: (output|exited)\ndata: \{"seq":1,/);
    expect(body).toMatch(/\nevent: output\ndata: \{"seq":\d+,"stream":"stdout","chunk":"[A-Za-z0-9+/=]+"\}\n\n/);
    expect(body).toMatch(/event: closed\ndata: \{"seq":\d+\}\n\n$/);
  });

  it('answers an error as problem+json whatever the Accept', async () => {
    const missing = await setup.api.get(paths.events(ENV, 'no-such-process'), { headers: { accept: MEDIA } });
    expectProblem(missing, 404, 'PROCESS_NOT_FOUND', setup.host.instanceId);
    expect(missing.headers['content-type']).toBe('application/problem+json');
  });

  it('gives HostClient the same events either way, SSE unless binaryEvents asks (then the binary stream)', async () => {
    const sse = await clientEvents(setup, done.id, false);
    const binary = await clientEvents(setup, done.id, true);
    expect(binary.events).toEqual(sse.events);
    const text = (stream: string): string =>
      sse.events.map((e) => (e.type === 'output' && e.stream === stream ? Buffer.from(e.chunk).toString('utf8') : '')).join('');
    expect([text('stdout'), text('stderr')]).toEqual([[1, 2, 3, 4, 5].map((i) => `line ${i}\n`).join(''), [1, 2, 3, 4, 5].map((i) => `err ${i}\n`).join('')]);
    // `closed` is last; `exited` may come before the last output (docs/protocol.md#sequence-numbers).
    expect(sse.events[sse.events.length - 1]?.type).toBe('closed');
    expect(sse.events.filter((e) => e.type === 'exited')).toHaveLength(1);
    expect(sse.events.find((e) => e.type === 'exited')).toMatchObject({ exitCode: 3 });
    expect([sse.types, sse.accepts]).toEqual([['text/event-stream; charset=utf-8'], ['text/event-stream']]);
    expect([binary.types, binary.accepts]).toEqual([[MEDIA], [`${MEDIA}, text/event-stream;q=0.5`]]);
  });

  it('resumes after `after`, which wins over Last-Event-ID, as SSE does', async () => {
    const all = (await clientEvents(setup, done.id, false)).events.map((e) => (e.type === 'truncated' ? -1 : e.seq));
    const closeSeq = all[all.length - 1] ?? 0;
    expect(closeSeq).toBeGreaterThan(2);
    const seqsOf = (stream: RawStream): number[] => stream.frames.map((f) => seqOf(f) ?? (f.kind === 'event' ? Number((JSON.parse(f.message.data) as { seq?: number }).seq) : -1));
    const stream = await open(setup.host.url, `${paths.events(ENV, done.id)}?after=2`, { accept: MEDIA, 'last-event-id': '1' });
    await stream.ended;
    expect(seqsOf(stream)).toEqual(all.filter((seq) => seq > 2));
    const fromHeader = await open(setup.host.url, paths.events(ENV, done.id), { accept: MEDIA, 'last-event-id': String(closeSeq - 1) });
    await fromHeader.ended;
    expect(seqsOf(fromHeader)).toEqual([closeSeq]);
  });

  it('pings an open stream, and ends a revoked token’s stream with a notice', async () => {
    const running = await startProcess(setup.api, ENV, { argv: ['sleep', '30'] });
    try {
      const stream = await open(setup.host.url, paths.events(ENV, running.id), { accept: MEDIA });
      await stream.next((f) => f.kind === 'ping', 'a ping');
      const watched = await open(setup.host.url, paths.events(ENV, running.id), { accept: MEDIA }, SECOND_TOKEN);
      await watched.next((f) => f.kind === 'ping', 'a ping for the second token');
      setup.tokens.replaceWith(new OperatorTokens(TOKENS.slice(0, 1)));
      const notice = await watched.next((f) => f.kind === 'notice', 'the revoked notice');
      await within(watched.ended, 10_000, 'the revoked stream to end');
      expect(notice).toEqual({ kind: 'notice', text: 'the operator token of this stream was revoked' });
      expect(watched.decoder.pending).toBe(0);
      // The other token's stream goes on.
      expect(stream.res.complete).toBe(false);
      stream.close();
    } finally {
      await setup.api.post(paths.terminate(ENV, running.id));
    }
  });
});

describe('operator API: the binary event stream at its bounds', () => {
  it('cuts a reader that does not read at the send buffer’s bound at a frame boundary, and ends every stream with the come-back frame when the host stops', async () => {
    const ENV = 'binary-bounds';
    const setup = await startApiHost({ environmentId: ENV, operator: { sse: { bufferBytes: 256 * 1024 } } });
    const running = await startProcess(setup.api, ENV, { argv: ['sleep', '30'] });
    const stuck = await open(setup.host.url, paths.events(ENV, running.id), { accept: MEDIA });
    stuck.res.pause();
    // It writes only once the stream is open and caught up: every event comes live, in one burst.
    const loud = await startProcess(setup.api, ENV, { argv: ['sh', '-c', 'read go; head -c 30000000 /dev/zero'], pipeStdin: true });
    const cut = await open(setup.host.url, paths.events(ENV, loud.id), { accept: MEDIA });
    cut.res.pause();
    expect((await setup.api.post(paths.stdin(ENV, loud.id), { writeId: 'go', data: b64('go\n') })).status).toBe(200);
    await finished(setup.api, ENV, loud.id, 60_000);
    cut.res.resume();
    await within(cut.ended, 20_000, 'the stream past its bound to end');
    const kinds = cut.frames.map((f) => (f.kind === 'event' ? f.message.event : f.kind));
    expect([cut.decoder.pending, kinds.includes('closed'), kinds.length > 0]).toEqual([0, false, true]);
    stuck.res.resume();
    const comeBack = stuck.next((f) => f.kind === 'event' && f.message.event === 'restart', 'the come-back frame');
    await setup.host.close({ retryMs: 1234 });
    const frame = await comeBack;
    expect(frame.kind === 'event' ? JSON.parse(frame.message.data) : frame).toEqual({ retryMs: 1234 });
    await within(stuck.ended, 10_000, 'the stream to end after the come-back frame');
  });
});
