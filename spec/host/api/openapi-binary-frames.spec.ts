/**
 * The binary event stream in the OpenAPI document: the events route's 200 has the second media type
 * (`application/vnd.exec-rx.events`), and every kind of frame the host's binary framing writes, decoded
 * by the client's decoder, is one item its `itemSchema` describes (OpenAPI 3.2): its kind byte, an
 * output's seq, time and bytes, an event's data against the branch's `contentSchema`; frames it never
 * writes are refused. The overview has no binary stream.
 */
import type { BinaryFrame } from '../../../src/client/binary-reader';
import { BinaryFrameDecoder } from '../../../src/client/binary-reader';
import { BINARY_FRAMING } from '../../../src/host/api/binary-frames';
import type { WireFrame } from '../../../src/host/api/event-framing';
import { OPENAPI_DOCUMENT } from '../../../src/host/api/openapi';
import { ProcessGapError } from '../../../src/errors/process-errors';
import { OutputLogError } from '../../../src/errors/log-errors';
import { truncatedRange } from '../../../src/store/log-events';
import { API_PREFIX } from '../../../src/wire/operator-api';
import type { BinaryItem, OpenApiDocument } from './openapi-document';
import { DocumentValidator, operationsOf } from './openapi-document';

const MEDIA = 'application/vnd.exec-rx.events';
const document = OPENAPI_DOCUMENT as unknown as OpenApiDocument;
const validator = new DocumentValidator(document);
const EVENTS = `${API_PREFIX}/environments/{environmentId}/processes/{processId}/events`;
const chunk = new TextEncoder().encode('hello\n');

const FRAMES: Readonly<Record<string, WireFrame>> = {
  'output stdout': BINARY_FRAMING.event({ type: 'output', seq: 1, stream: 'stdout', chunk }),
  'output stderr': BINARY_FRAMING.event({ type: 'output', seq: 1, stream: 'stderr', chunk }),
  exited: BINARY_FRAMING.event({ type: 'exited', seq: 2, exitCode: 0, sandboxDenied: false }),
  closed: BINARY_FRAMING.event({ type: 'closed', seq: 3 }),
  failed: BINARY_FRAMING.event({ type: 'failed', error: new ProcessGapError('p-1', 1, 400) }),
  truncated: BINARY_FRAMING.event({ type: 'truncated', nextSeq: 5, droppedEvents: 4, droppedBytes: 100 }),
  'log output pty': BINARY_FRAMING.logEvent({ type: 'output', seq: 1, stream: 'pty', chunk, time: 1_700_000_000_000 }, false),
  'log exited': BINARY_FRAMING.logEvent({ type: 'exited', seq: 2, exitCode: 137, sandboxDenied: false, time: 1_700_000_000_001 }, false),
  'log closed': BINARY_FRAMING.logEvent({ type: 'closed', seq: 3, time: 1_700_000_000_002 }, false),
  'log truncated': BINARY_FRAMING.logEvent(truncatedRange('quota', 4, 9, 2048), false),
  'log failed': BINARY_FRAMING.logEvent({ type: 'failed', error: new OutputLogError('p-1', 'ENOSPC', 'write') }, false),
  'api truncated': BINARY_FRAMING.truncated(10, 3),
  'api failed': BINARY_FRAMING.failed('PROCESS_NOT_FOUND', 'no process p-1'),
  restart: BINARY_FRAMING.comeBack(2_500),
  ping: BINARY_FRAMING.ping(),
  notice: BINARY_FRAMING.revoked(),
};

/** One frame's bytes, decoded by the client's decoder into the item the document models. */
function itemOf(frame: WireFrame): BinaryItem {
  const bytes = frame instanceof Uint8Array ? frame : Buffer.concat([frame.head, frame.body]);
  const decoder = new BinaryFrameDecoder();
  decoder.push(new Uint8Array(bytes));
  const decoded: BinaryFrame | undefined = decoder.next();
  if (decoded === undefined || decoder.pending !== 0) throw new Error('not one whole frame');
  const kind = bytes[0] ?? -1;
  switch (decoded.kind) {
    case 'output': {
      const { seq, time, chunk: bytesOut } = decoded.output;
      return { event: 'output', kind, seq, ...(time === undefined ? {} : { time }), chunk: Buffer.from(bytesOut).toString('latin1') };
    }
    case 'event':
      return { event: decoded.message.event, kind, data: decoded.message.data };
    case 'ping':
      return { event: 'ping', kind };
    case 'notice':
      return { event: 'notice', kind, text: decoded.text };
  }
}

function documented(path: string): { readonly at: string; readonly response: Parameters<DocumentValidator['validateEvent']>[1] } {
  const operation = operationsOf(document).find((o) => o.path === path && o.method === 'GET');
  const response = operation === undefined ? undefined : validator.responseOf(operation, 200);
  if (response === undefined) throw new Error(`no 200 of GET ${path}`);
  return response;
}

describe("the OpenAPI document's binary event stream", () => {
  it.each(Object.keys(FRAMES))('describes the %s frame the host writes', (name) => {
    const { at, response } = documented(EVENTS);
    const frame = FRAMES[name];
    if (frame === undefined) throw new Error(name);
    expect(validator.validateEvent(at, response, itemOf(frame), MEDIA)).toEqual([]);
  });

  it('has a branch for each event of the SSE stream, and ping and notice', () => {
    const { at, response } = documented(EVENTS);
    expect(validator.eventNames(at, response, MEDIA)).toEqual([...validator.eventNames(at, response), 'ping', 'notice']);
  });

  it('refuses what the host never writes: an output with an event kind byte, an unknown event, an event without data, a seq past 2^53', () => {
    const { at, response } = documented(EVENTS);
    const bad: Record<string, BinaryItem> = {
      'output as kind 16': { event: 'output', kind: 16, seq: 1, chunk: '' },
      unknown: { event: 'nope', kind: 16, data: '{}' },
      'exited without data': { event: 'exited', kind: 16 },
      'seq past 2^53': { event: 'output', kind: 1, seq: 2 ** 53, chunk: '' },
      'exited with bad data': { event: 'exited', kind: 16, data: '{"seq":1}' },
    };
    const accepted = Object.entries(bad).filter(([, item]) => validator.validateEvent(at, response, item, MEDIA).length === 0);
    expect(accepted.map(([name]) => name)).toEqual([]);
  });

  it('is offered on a process’s events only: the overview answers SSE alone', () => {
    const overview = documented(`${API_PREFIX}/overview`);
    expect(Object.keys(overview.response.content ?? {})).toEqual(['text/event-stream']);
    expect(Object.keys(documented(EVENTS).response.content ?? {})).toEqual(['text/event-stream', MEDIA]);
  });
});
