/**
 * Every kind of SSE frame the host writes, made by the host's own frame functions, is an event the
 * OpenAPI document's `itemSchema` describes (OpenAPI 3.2), on each stream that sends it: its fields
 * (`id:` the seq of a sequenced event, `retry:` on `restart`), and its data against the branch's
 * `contentSchema`. The int spec (openapi.int.spec) checks the events a real host sends; this one also
 * covers those a short run does not show (`failed`, `truncated` of both kinds, `restart`).
 */
import { OPENAPI_DOCUMENT } from '../../../src/host/api/openapi';
import { failedFrame, frameOf, logFrameOf, overviewFrame, truncatedFrame } from '../../../src/host/api/event-frames';
import { comeBackFrame } from '../../../src/host/api/event-framing';
import { ProcessGapError } from '../../../src/errors/process-errors';
import { OutputLogError } from '../../../src/errors/log-errors';
import { truncatedRange } from '../../../src/store/log-events';
import { API_PREFIX } from '../../../src/wire/operator-api';
import type { OpenApiDocument } from './openapi-document';
import { DocumentValidator, operationsOf } from './openapi-document';
import { parseFrames } from './sse-reader';

const document = OPENAPI_DOCUMENT as unknown as OpenApiDocument;
const validator = new DocumentValidator(document);
const EVENTS = `${API_PREFIX}/environments/{environmentId}/processes/{processId}/events`;
const OVERVIEW = `${API_PREFIX}/overview`;

const chunk = new TextEncoder().encode('hello\n');
const PROCESS_FRAMES: Readonly<Record<string, Buffer>> = {
  output: frameOf({ type: 'output', seq: 1, stream: 'stdout', chunk }),
  exited: frameOf({ type: 'exited', seq: 2, exitCode: 0, sandboxDenied: false }),
  closed: frameOf({ type: 'closed', seq: 3 }),
  failed: frameOf({ type: 'failed', error: new ProcessGapError('p-1', 1, 400) }),
  truncated: frameOf({ type: 'truncated', nextSeq: 5, droppedEvents: 4, droppedBytes: 100 }),
  'log output': logFrameOf({ type: 'output', seq: 1, stream: 'pty', chunk, time: 1_700_000_000_000 }),
  'log exited': logFrameOf({ type: 'exited', seq: 2, exitCode: 137, sandboxDenied: false, time: 1_700_000_000_001 }),
  'log closed': logFrameOf({ type: 'closed', seq: 3, time: 1_700_000_000_002 }),
  'log truncated': logFrameOf(truncatedRange('quota', 4, 9, 2048)),
  'log failed': logFrameOf({ type: 'failed', error: new OutputLogError('p-1', 'ENOSPC', 'write') }),
  'api truncated': truncatedFrame(10, 3),
  'api failed': failedFrame('PROCESS_NOT_FOUND', 'no process p-1'),
  restart: comeBackFrame(2_500),
};
const OVERVIEW_FRAMES: Readonly<Record<string, Buffer>> = {
  ...PROCESS_FRAMES,
  overview: overviewFrame({ hostInstance: 'h-1', environments: [{ id: 'env-1', generation: 1, state: 'connected', error: null, info: null, processCount: 0, processes: [] }] }),
};

function errorsOn(path: string, frames: Readonly<Record<string, Buffer>>): Record<string, string[]> {
  const operation = operationsOf(document).find((o) => o.path === path && o.method === 'GET');
  const documented = operation === undefined ? undefined : validator.responseOf(operation, 200);
  if (documented === undefined) throw new Error(`no 200 of GET ${path}`);
  return Object.fromEntries(
    Object.entries(frames).map(([name, frame]) => {
      const { events } = parseFrames(frame.toString('utf8'));
      const [event, ...more] = events;
      if (event === undefined || more.length > 0) return [name, [`${events.length} events in the frame`]];
      const item = { event: event.event, data: event.data, ...(event.id === undefined ? {} : { id: event.id }), ...(event.retry === undefined ? {} : { retry: Number(event.retry) }) };
      return [name, validator.validateEvent(documented.at, documented.response, item)];
    }),
  );
}

const none = (frames: Readonly<Record<string, Buffer>>): Record<string, string[]> => Object.fromEntries(Object.keys(frames).map((name) => [name, []]));

describe("the OpenAPI document's itemSchema describes every frame the host writes", () => {
  it('on a process\'s event stream (…/events)', () => {
    expect(errorsOn(EVENTS, PROCESS_FRAMES)).toEqual(none(PROCESS_FRAMES));
  });

  it('on the overview (its snapshots, and the selected process\'s events)', () => {
    expect(errorsOn(OVERVIEW, OVERVIEW_FRAMES)).toEqual(none(OVERVIEW_FRAMES));
  });

  it('and refuses what the host never writes (an output without its seq as id, a restart without retry, an unknown event)', () => {
    const bad = {
      'output without id': Buffer.from(`event: output\ndata: {"seq":1,"stream":"stdout","chunk":"aGk="}\n\n`),
      'restart without retry': Buffer.from(`event: restart\ndata: {"retryMs":5}\n\n`),
      unknown: Buffer.from(`event: nope\ndata: {}\n\n`),
      'overview on …/events': overviewFrame({ hostInstance: 'h-1', environments: [] }),
    };
    const errors = errorsOn(EVENTS, bad);
    expect(Object.entries(errors).filter(([, list]) => list.length === 0).map(([name]) => name)).toEqual([]);
  });
});
