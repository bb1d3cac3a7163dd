/**
 * How the OpenAPI document (`./openapi`) describes the operator API's event streams: the Server-Sent
 * Events of a process's stream and of the overview, each one branch of an OpenAPI 3.2 `itemSchema`; and
 * the binary stream a process's events route also answers (`application/vnd.exec-rx.events`), its frames
 * described as decoded items of the same kind.
 */
import { BINARY_EVENTS_MEDIA_TYPE, FrameKind, MAX_FRAME_PAYLOAD_BYTES } from '../../wire/binary-events';
import type { Json } from './openapi-builders';
import { ref } from './openapi-builders';

/** How an SSE event of a stream is framed: `id:` the seq (a sequenced event), `retry:` (the come-back event), or neither. */
type Framing = 'seq' | 'retry' | 'none';

/** One event a stream sends: its name, the schema of its data, its framing. */
export type StreamEvent = readonly [name: string, schema: string, framing: Framing];

/** The events a process's stream sends: name, the schema of its data, its framing. */
export const PROCESS_EVENTS: readonly StreamEvent[] = [
  ['output', 'OutputEventData', 'seq'],
  ['exited', 'ExitedEventData', 'seq'],
  ['closed', 'ClosedEventData', 'seq'],
  ['failed', 'FailedEventData', 'none'],
  ['truncated', 'TruncatedEventData', 'none'],
  ['restart', 'RestartEventData', 'retry'],
];

/** The events of the overview: its snapshots, then those of `…/events` for a selected process. */
export const OVERVIEW_EVENTS: readonly StreamEvent[] = [['overview', 'Overview', 'none'], ...PROCESS_EVENTS];

/** The `id:` field of a sequenced event. */
const SEQ_ID: Json = {
  type: 'string',
  pattern: '^(0|[1-9][0-9]*)$',
  description: 'The seq (as in the data): resume after it with `Last-Event-ID` or `?after=`.',
};

/** The `retry:` field of the come-back event. */
const RETRY: Json = { type: 'integer', minimum: 0, description: 'The same ms as `retryMs`.' };

/**
 * One SSE event as OpenAPI 3.2 models it (an object of its fields: `event`, `data`, `id`, `retry`): its
 * `event` name, and its `data` a JSON text whose parsed value `contentSchema` describes.
 */
function sseEvent([name, schema, framing]: StreamEvent): Json {
  const properties: Record<string, Json> = {
    event: { const: name },
    data: { type: 'string', contentMediaType: 'application/json', contentSchema: ref(schema) },
  };
  if (framing === 'seq') properties['id'] = SEQ_ID;
  if (framing === 'retry') properties['retry'] = RETRY;
  return { title: name, type: 'object', properties, required: ['event', 'data', ...(framing === 'seq' ? ['id'] : framing === 'retry' ? ['retry'] : [])] };
}

/**
 * An SSE response: its `itemSchema` (OpenAPI 3.2) describes each event, one `oneOf` branch per event
 * name. No `schema`: for `text/event-stream`, 3.2 reads `schema` as the whole stream as an array of
 * events, while a 3.0/3.1 tool would read it as the body; without it, such a tool sees a stream of text.
 */
export const eventStream = (description: string, events: readonly StreamEvent[]): Json => ({
  description,
  content: {
    'text/event-stream': {
      itemSchema: {
        type: 'object',
        properties: { event: { type: 'string' }, data: { type: 'string' }, id: { type: 'string' }, retry: { type: 'integer', minimum: 0 } },
        required: ['event', 'data'],
        oneOf: events.map(sseEvent),
      },
    },
  },
});

/** How a binary frame is laid out, for the document (docs/binary-events.md says the same at length). */
export const BINARY_FRAMING_TEXT =
  `Frames: an 8-byte header (byte 0 the kind: ${FrameKind.stdout} stdout, ${FrameKind.stderr} stderr, ${FrameKind.pty} pty, ${FrameKind.event} event, ` +
  `${FrameKind.ping} ping, ${FrameKind.notice} notice; byte 1 flags, bit 0 an output's time; bytes 2-3 zero; bytes 4-7 the payload's length, ` +
  `unsigned big-endian, at most ${MAX_FRAME_PAYLOAD_BYTES}), then the payload. Output: the seq (unsigned 64-bit big-endian), the time ` +
  '(a 64-bit big-endian IEEE float, ms since the epoch) when flagged, then the bytes as they are. Event: one byte n, the name (n ASCII ' +
  'bytes), the data as UTF-8 JSON (as the SSE event\'s data). Ping: no payload, every 15 s. Notice: UTF-8 text to skip. A client must ' +
  'drop a frame cut short by the end of the body and end the stream at a header no frame has; it resumes by `after` either way.';

/** One frame of the binary stream, decoded: an output's fields and bytes, or an event's name and data as in SSE. */
function binaryFrame([name, schema]: StreamEvent): Json {
  if (name === 'output') {
    return {
      title: 'output',
      type: 'object',
      properties: {
        event: { const: 'output' },
        kind: { enum: [FrameKind.stdout, FrameKind.stderr, FrameKind.pty], description: 'The stream: 1 stdout, 2 stderr, 3 pty.' },
        seq: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
        time: { type: 'integer', minimum: 0, description: 'When the host received it (ms since the epoch), on events read from its output log.' },
        chunk: { type: 'string', contentMediaType: 'application/octet-stream', description: 'The bytes as they are (no base64).' },
      },
      required: ['event', 'kind', 'seq', 'chunk'],
    };
  }
  return {
    title: name,
    type: 'object',
    properties: {
      event: { const: name },
      kind: { const: FrameKind.event },
      data: { type: 'string', contentMediaType: 'application/json', contentSchema: ref(schema) },
    },
    required: ['event', 'kind', 'data'],
  };
}

/** The frames of the binary stream that carry no event. */
const QUIET_FRAMES: readonly Json[] = [
  { title: 'ping', type: 'object', properties: { event: { const: 'ping' }, kind: { const: FrameKind.ping } }, required: ['event', 'kind'] },
  {
    title: 'notice',
    type: 'object',
    properties: { event: { const: 'notice' }, kind: { const: FrameKind.notice }, text: { type: 'string' } },
    required: ['event', 'kind', 'text'],
  },
];

/**
 * A process's event stream in both framings: SSE (`text/event-stream`, for browsers, curl and anything
 * that does not name the other), and the binary stream for a request whose `Accept` names it. Each item
 * of the binary one is a frame, decoded (the layout in {@link BINARY_FRAMING_TEXT}).
 */
export function negotiatedEventStream(description: string, events: readonly StreamEvent[]): Json {
  const sse = eventStream(description, events) as { readonly description: string; readonly content: Record<string, Json> };
  return {
    description:
      `${description}. SSE unless the request's Accept names ${BINARY_EVENTS_MEDIA_TYPE} ` +
      '(with a quality at least that of text/event-stream); the answer says Vary: Accept.',
    content: {
      ...sse.content,
      [BINARY_EVENTS_MEDIA_TYPE]: {
        'x-exec-rx-framing': BINARY_FRAMING_TEXT,
        itemSchema: {
          type: 'object',
          properties: { event: { type: 'string' }, kind: { type: 'integer', minimum: 0, maximum: 255 } },
          required: ['event', 'kind'],
          oneOf: [...events.map(binaryFrame), ...QUIET_FRAMES],
        },
      },
    },
  };
}
