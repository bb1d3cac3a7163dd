/**
 * How the OpenAPI document (`./openapi`) describes the operator API's Server-Sent Events: the events of a
 * process's stream and of the overview, each one branch of an OpenAPI 3.2 `itemSchema`.
 */
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
