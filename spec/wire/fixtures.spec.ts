import type * as t from 'io-ts';
import * as E from 'fp-ts/lib/Either';
import { decodeWith } from '../../src/wire/decode';
import { encodeErrorResponse, encodeNotification, encodeRequest, encodeResponse, ErrorCodes, JsonRpcErrorObject, parseInbound } from '../../src/wire/jsonrpc';
import type { Inbound } from '../../src/wire/jsonrpc';
import { CLIENT_NOTIFICATIONS, isMethodName, isNotificationMethod, METHODS, NOTIFICATIONS, SERVER_REQUESTS } from '../../src/wire/methods';
import { ExecParams } from '../../src/wire/process';
import { SandboxContext } from '../../src/wire/sandbox';
import { PROTOCOL_EXAMPLES } from './fixtures/protocol-examples';
import type { ProtocolExample } from './fixtures/protocol-examples';

/** The codec a payload is checked with, and the payload in its wire form. */
interface Payload {
  readonly codec: t.Mixed;
  readonly wire: unknown;
}

const hasKey = <K extends string>(table: object, key: string): key is K => Object.prototype.hasOwnProperty.call(table, key);

function methodCodec(example: ProtocolExample, side: 'params' | 'result'): t.Mixed {
  const method = example.method ?? '';
  if (example.direction === 'client→server' && side === 'result' && hasKey<keyof typeof SERVER_REQUESTS>(SERVER_REQUESTS, method)) {
    return SERVER_REQUESTS[method].result;
  }
  if (!isMethodName(method)) throw new Error(`${example.name}: no method ${method}`);
  return METHODS[method][side];
}

function inboundPayload(example: ProtocolExample, inbound: Inbound): Payload | undefined {
  switch (inbound.type) {
    case 'request':
      if (example.direction === 'server→client' && hasKey<keyof typeof SERVER_REQUESTS>(SERVER_REQUESTS, inbound.method)) {
        return { codec: SERVER_REQUESTS[inbound.method].params, wire: inbound.params };
      }
      if (!isMethodName(inbound.method)) throw new Error(`unknown method ${inbound.method}`);
      return { codec: METHODS[inbound.method].params, wire: inbound.params };
    case 'notification':
      if (example.direction === 'client→server' && hasKey<keyof typeof CLIENT_NOTIFICATIONS>(CLIENT_NOTIFICATIONS, inbound.method)) {
        return { codec: CLIENT_NOTIFICATIONS[inbound.method], wire: inbound.params };
      }
      if (!isNotificationMethod(inbound.method)) throw new Error(`unknown notification ${inbound.method}`);
      return { codec: NOTIFICATIONS[inbound.method], wire: inbound.params };
    case 'response':
      return { codec: methodCodec(example, 'result'), wire: inbound.result };
    case 'error':
      return undefined;
  }
}

function payloadOf(example: ProtocolExample): Payload | undefined {
  const wire: unknown = JSON.parse(example.json);
  switch (example.kind) {
    case 'result':
      return { codec: methodCodec(example, 'result'), wire };
    case 'params':
      return { codec: methodCodec(example, 'params'), wire };
    case 'errorObject':
      return { codec: JsonRpcErrorObject, wire };
    case 'sandbox':
      return { codec: SandboxContext, wire };
    case 'message': {
      const inbound = parseInbound(example.json);
      if (E.isLeft(inbound)) throw inbound.left;
      return inboundPayload(example, inbound.right);
    }
  }
}

/** Re-serialises a classified message the way we would send it. */
function reencode(inbound: Inbound): string {
  switch (inbound.type) {
    case 'request':
      return encodeRequest(inbound.id, inbound.method, inbound.params);
    case 'notification':
      return encodeNotification(inbound.method, inbound.params);
    case 'response':
      return encodeResponse(inbound.id, inbound.result);
    case 'error':
      return encodeErrorResponse(inbound.id, inbound.error.code, inbound.error.message, inbound.error.data);
  }
}

const byName = PROTOCOL_EXAMPLES.map((example) => [example.name, example] as const);
const messages = PROTOCOL_EXAMPLES.filter((example) => example.kind === 'message').map((example) => [example.name, example] as const);

describe('recorded protocol examples (docs/protocol.md#recorded-examples)', () => {
  it('lists a fixture for every complete example', () => {
    expect(PROTOCOL_EXAMPLES).toHaveLength(46);
    expect(new Set(PROTOCOL_EXAMPLES.map((example) => example.name)).size).toBe(46);
    expect(PROTOCOL_EXAMPLES.filter((example) => example.json.includes('…'))).toEqual([]);
  });

  it.each(messages)('classifies message "%s" into what the envelope says', (_name, example) => {
    const json: { readonly [key: string]: unknown } = JSON.parse(example.json);
    const expected: Inbound =
      json['error'] !== undefined
        ? { type: 'error', id: json['id'] as number, error: json['error'] as JsonRpcErrorObject }
        : json['result'] !== undefined
          ? { type: 'response', id: json['id'] as number, result: json['result'] }
          : json['id'] !== undefined
            ? { type: 'request', id: json['id'] as number, method: json['method'] as string, params: json['params'] }
            : { type: 'notification', method: json['method'] as string, params: json['params'] };
    expect(parseInbound(example.json)).toEqual(E.right(expected));
  });

  it.each(messages)('re-encodes message "%s" to the same JSON', (_name, example) => {
    const inbound = parseInbound(example.json);
    if (E.isLeft(inbound)) throw inbound.left;
    expect(JSON.parse(reencode(inbound.right))).toEqual(JSON.parse(example.json));
  });

  it.each(byName)('decodes the payload of "%s" with its codec', (_name, example) => {
    const payload = payloadOf(example);
    if (payload === undefined) return;
    expect(E.isRight(decodeWith(payload.codec)(payload.wire))).toBe(true);
  });

  // No exception is needed: every example carries every field that decodes to a default.
  it.each(byName)('round-trips the payload of "%s" (encode after decode gives the same JSON)', (_name, example) => {
    const payload = payloadOf(example);
    if (payload === undefined) return;
    const decoded = decodeWith(payload.codec)(payload.wire);
    if (E.isLeft(decoded)) throw decoded.left;
    expect(payload.codec.encode(decoded.right)).toEqual(payload.wire);
  });

  it('uses only documented error codes in the error examples', () => {
    const codes = PROTOCOL_EXAMPLES.flatMap((example) => {
      const json: { readonly code?: unknown; readonly error?: { readonly code?: unknown } } = JSON.parse(example.json);
      return example.kind === 'errorObject' ? [json.code] : json.error === undefined ? [] : [json.error.code];
    });
    expect(codes).toEqual([ErrorCodes.MethodNotFound, ErrorCodes.InvalidRequest, ErrorCodes.InternalError]);
  });

  it('accepts the sandbox example inside process/start params', () => {
    const sandboxExample = PROTOCOL_EXAMPLES.find((example) => example.kind === 'sandbox');
    const sandbox: unknown = JSON.parse(sandboxExample?.json ?? 'null');
    const params = { processId: 'p1', argv: ['true'], cwd: 'file:///tmp', env: {}, tty: false, sandbox };
    expect(decodeWith(ExecParams)(params)).toEqual(E.right(params));
  });
});
