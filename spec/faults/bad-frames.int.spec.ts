/**
 * Fault injection: bad frames toward the host while the real executor runs a process. A relay between
 * the proxy and the host's acceptor injects real WebSocket frames (invalid JSON, wrong types, unknown
 * ids, an id -1 error, unknown and malformed notifications, binary garbage, a 20 MiB frame) and rewrites
 * the executor's own frames (a duplicated response, a response with a wrong-typed result, duplicated and
 * swapped output notifications). Each gets its typed error or diagnostic, the connection stays up, and
 * the running process's output arrives complete, in order, exactly once.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { filter, toArray } from 'rxjs/operators';
import type { ConnectionState, Diagnostic, ProcessEvent } from '../../src';
import { DecodeError, RpcError } from '../../src';
import { FAULT_SEED, PATH_ENV, currentRpc, faultSetup, mulberry32 } from './fault-kit';
import type { FrameRelay, RelayFrame } from './frame-relay';

const FILE_BUDGET_MS = 60_000;
jest.setTimeout(FILE_BUDGET_MS);

const HUGE_FRAME_BYTES = 20 * 1024 * 1024;

/** A text frame's JSON object, or `undefined`. */
function jsonOf(frame: RelayFrame): Record<string, unknown> | undefined {
  if (frame.binary || typeof frame.data !== 'string') return undefined;
  const value: unknown = JSON.parse(frame.data);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value } : undefined;
}

/** The processId of a `process/output` notification frame, or `undefined`. */
function outputProcessOf(frame: RelayFrame): string | undefined {
  const message = jsonOf(frame);
  const params = message?.['params'];
  if (message?.['method'] !== 'process/output' || typeof params !== 'object' || params === null || !('processId' in params)) return undefined;
  return typeof params.processId === 'string' ? params.processId : undefined;
}

/** A response frame to a request of `method` the host sent, with its id; else `undefined`. */
function responseTo(relay: FrameRelay, frame: RelayFrame, method: string): { id: unknown; message: Record<string, unknown> } | undefined {
  const message = jsonOf(frame);
  if (message === undefined || !('id' in message) || !('result' in message)) return undefined;
  return relay.methodOf(message['id']) === method ? { id: message['id'], message } : undefined;
}

/** Seeded bytes that are not JSON (a NUL first byte can start no JSON text). */
function garbage(random: () => number, length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i += 1) bytes[i] = Math.floor(random() * 256);
  bytes[0] = 0;
  return bytes;
}

/** A compact, comparable view of a diagnostic. */
function summary(d: Diagnostic): Record<string, unknown> {
  switch (d.type) {
    case 'unparsableFrame':
      return { type: d.type, decodeError: d.error instanceof DecodeError, what: d.error.what };
    case 'unattributedError':
      return { type: d.type, rpcError: d.error instanceof RpcError, rpcCode: d.error.rpcCode };
    case 'unknownResponse':
      return { type: d.type, id: d.id };
    case 'malformedNotification':
      return { type: d.type, method: d.method, decodeError: d.error instanceof DecodeError };
    case 'unknownNotification':
      return { type: d.type, method: d.method };
    case 'serverRequestFailed':
      return { type: d.type, method: d.method, code: d.error.code };
  }
}

describe(`fault injection: bad frames toward the host [seed ${FAULT_SEED}]`, () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-faults-frames-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it(`reports each bad frame as a typed error or diagnostic and loses nothing [seed ${FAULT_SEED}]`, async () => {
    const random = mulberry32(FAULT_SEED ^ 0xbad_f4a3e);
    const setup = await faultSetup('env-faults-frames', { relay: true });
    const { environment } = setup;
    const relay = setup.relay;
    if (relay === undefined) throw new Error('no relay');

    const gate = join(work, 'GATE');
    const script = `i=0; while [ ! -f '${gate}' ]; do i=$((i+1)); echo "line $i"; sleep 0.005; done; echo end`;
    const { process: proc } = await environment.getExecBackend().start({ argv: ['/bin/sh', '-c', script], cwd: work, env: PATH_ENV });
    const events = lastValueFrom(proc.events$.pipe(toArray()));
    const lines = lastValueFrom(proc.lines$('stdout').pipe(toArray()));
    const pid = proc.processId;
    await firstValueFrom(proc.events$.pipe(filter((e) => e.type === 'output' && e.seq >= 5)));

    const rpc = currentRpc(environment);
    const diagnostics: Diagnostic[] = [];
    rpc.diagnostics$.subscribe((d) => diagnostics.push(d));
    const states: ConnectionState['state'][] = [];
    const watching = environment.connectionState$.subscribe((s) => states.push(s.state));
    /** A real call answered after everything injected before it: the host has handled those frames. */
    const barrier = async (): Promise<void> => {
      expect((await environment.forceInfo()).executorVersion).toBe('0.171.0');
    };
    const expected: Record<string, unknown>[] = [];
    const inject = async (data: string | Buffer, diagnostic: Record<string, unknown> | undefined, binary = false): Promise<void> => {
      await relay.injectToHost(data, binary);
      if (diagnostic !== undefined) expected.push(diagnostic);
    };

    // 1. Invalid JSON and valid JSON that is no JSON-RPC message.
    await inject('{not json', { type: 'unparsableFrame', decodeError: true, what: 'JSON' });
    await inject('', { type: 'unparsableFrame', decodeError: true, what: 'JSON' });
    await inject('[{"id":1,"result":{}}]', { type: 'unparsableFrame', decodeError: true, what: 'JsonRpcMessage' });
    await inject('{"id":1.5,"result":{}}', { type: 'unparsableFrame', decodeError: true, what: 'JsonRpcMessage' });
    await inject('{"id":true,"result":{}}', { type: 'unparsableFrame', decodeError: true, what: 'JsonRpcMessage' });
    await inject('{"id":3,"error":"bad"}', { type: 'unparsableFrame', decodeError: true, what: 'JsonRpcMessage' });
    await inject('{"id":3,"result":1,"error":{"code":1,"message":"both"}}', { type: 'unparsableFrame', decodeError: true, what: 'JsonRpcMessage' });
    await inject('{"method":42,"params":{}}', { type: 'unparsableFrame', decodeError: true, what: 'JsonRpcMessage' });
    await inject('null', { type: 'unparsableFrame', decodeError: true, what: 'JsonRpcMessage' });
    // 2. Replies nobody waits for, and the executor's "could not parse what you sent" error.
    await inject('{"id":987654321,"result":{"ok":true}}', { type: 'unknownResponse', id: 987654321 });
    await inject('{"id":"no-such-call","error":{"code":-32603,"message":"boom"}}', { type: 'unknownResponse', id: 'no-such-call' });
    await inject('{"id":-1,"error":{"code":-32600,"message":"failed to parse websocket JSON-RPC message"}}', { type: 'unattributedError', rpcError: true, rpcCode: -32600 });
    // 3. Notifications: unknown, malformed for nobody, and malformed for the live process (a hole the
    //    process fills with a read: no diagnostic, no lost output).
    await inject('{"method":"bogus/notify","params":{}}', { type: 'unknownNotification', method: 'bogus/notify' });
    await inject('{"method":"process/output","params":{"processId":"nobody","seq":"one"}}', { type: 'malformedNotification', method: 'process/output', decodeError: true });
    await inject('{"method":"fs/missingChanged","params":{"watchId":-3}}', { type: 'malformedNotification', method: 'fs/missingChanged', decodeError: true });
    const readsBefore = relay.requestCount('process/read');
    await inject(JSON.stringify({ method: 'process/output', params: { processId: pid, seq: 'x', stream: 'stdout', chunk: '!!' } }), undefined);
    await inject(JSON.stringify({ method: 'process/exited', params: { processId: pid, seq: -5, exitCode: 'zero' } }), undefined);
    await inject(JSON.stringify({ method: 'process/output', params: { processId: pid, seq: 1, stream: 'stdout', chunk: Buffer.from('forged duplicate of seq 1\n').toString('base64') } }), undefined);
    // 4. Binary frames: seeded garbage, and JSON in a binary frame (accepted like text).
    await inject(garbage(random, 4096), { type: 'unparsableFrame', decodeError: true, what: 'JSON' }, true);
    await inject(Buffer.from('{"method":"bogus/binary","params":{}}'), { type: 'unknownNotification', method: 'bogus/binary' }, true);
    // 5. A 20 MiB frame (beyond the executor's own 16 MiB inbound limit): handled like any other frame.
    const pad = 'x'.repeat(HUGE_FRAME_BYTES);
    await inject(`{"method":"bogus/huge","params":{"pad":"${pad}"}}`, { type: 'unknownNotification', method: 'bogus/huge' });
    await inject(`{"id":424242,"result":{"pad":"${pad}"}}`, { type: 'unknownResponse', id: 424242 });
    // 6. Server requests: an unknown method, malformed policy params, and a valid policy request (no
    //    decider configured). The host answers each with a JSON-RPC reply; the relay keeps the answers.
    relay.captureFromHost((message) => typeof message['id'] === 'string' && message['id'].startsWith('injected-'));
    await inject('{"id":"injected-1","method":"bogus/serverRequest","params":{}}', undefined);
    await inject('{"id":"injected-2","method":"network/policyRequest","params":{"processId":5}}', undefined);
    await inject(JSON.stringify({ id: 'injected-3', method: 'network/policyRequest', params: { processId: pid, request: { protocol: 'https_connect', host: 'example.com', port: 443 } } }), undefined);
    await barrier();
    await relay.whenRequested('process/read', readsBefore + 1); // the holes are filled by reads
    expect(await relay.whenCaptured(3)).toEqual([
      { id: 'injected-1', error: { code: -32601, message: 'exec-server client does not implement `bogus/serverRequest` yet' } },
      { id: 'injected-2', error: { code: -32602, message: expect.stringContaining('NetworkPolicyRequestParams') } },
      { id: 'injected-3', result: { decision: { type: 'deny', reason: 'not_allowed' } } },
    ]);

    // 7. The executor's response to environment/info arrives twice: the call gets the first, the copy is a diagnostic.
    const duplicatedIds: unknown[] = [];
    relay.setTamper((frame) => {
      const reply = responseTo(relay, frame, 'environment/info');
      if (reply === undefined) return [frame];
      duplicatedIds.push(reply.id);
      return [frame, frame];
    });
    await barrier();
    expect(duplicatedIds).toHaveLength(1);
    expected.push({ type: 'unknownResponse', id: duplicatedIds[0] });

    // 8. A response with wrong types fails that call alone with a DecodeError.
    relay.setTamper((frame) => {
      const reply = responseTo(relay, frame, 'environment/info');
      return reply === undefined ? [frame] : [{ data: JSON.stringify({ id: reply.id, result: { executorVersion: 42, shell: 'no' } }), binary: false }];
    });
    const decodeFailure = await environment.forceInfo().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(decodeFailure).toBeInstanceOf(DecodeError);
    expect(decodeFailure).toMatchObject({ code: 'DECODE_FAILED' });
    relay.setTamper(undefined);
    await barrier();

    // 9. Output notifications duplicated, then swapped in pairs: still exactly once and in order.
    const seqAt = async (n: number): Promise<void> => {
      await firstValueFrom(proc.events$.pipe(filter((e) => e.type === 'output' && e.seq >= n)));
    };
    let duplicated = 0;
    relay.setTamper((frame) => {
      if (outputProcessOf(frame) !== pid) return [frame];
      duplicated += 1;
      return [frame, frame];
    });
    await seqAt(proc.lastPublishedSeq + 20);
    let held: RelayFrame | undefined;
    let swapped = 0;
    relay.setTamper((frame) => {
      if (outputProcessOf(frame) !== pid) return [frame];
      if (held === undefined) {
        held = frame;
        return [];
      }
      const earlier = held;
      held = undefined;
      swapped += 1;
      return [frame, earlier];
    });
    await seqAt(proc.lastPublishedSeq + 20);
    relay.setTamper(undefined);
    const stillHeld: RelayFrame | undefined = held;
    if (stillHeld !== undefined) await relay.injectToHost(stillHeld.data, stillHeld.binary);
    await barrier();
    expect(duplicated).toBeGreaterThanOrEqual(20);
    expect(swapped).toBeGreaterThanOrEqual(5);

    // Everything was reported, in order, and the connection never dropped.
    expect(diagnostics.map(summary)).toEqual(expected);
    expect(currentRpc(environment)).toBe(rpc);
    expect(relay.connectionCount).toBe(1);

    writeFileSync(gate, '');
    const all: ProcessEvent[] = await events;
    const allLines = await lines;
    watching.unsubscribe();
    expect(states).toEqual(['connected']);
    const seqs = all.flatMap((e) => ('seq' in e ? [e.seq] : []));
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(all.filter((e) => e.type !== 'output').map((e) => (e.type === 'exited' ? `exited:${e.exitCode}` : e.type))).toEqual(['exited:0', 'closed']);
    expect(allLines.at(-1)).toBe('end');
    const numbered = allLines.slice(0, -1);
    expect(numbered.length).toBeGreaterThan(40);
    expect(numbered).toEqual(numbered.map((_, i) => `line ${i + 1}`));
    await barrier();
    expect({ routes: rpc.processRouteCount, pending: rpc.pendingCount, processes: environment.client.processCount }).toEqual({ routes: 0, pending: 0, processes: 0 });
  });
});
