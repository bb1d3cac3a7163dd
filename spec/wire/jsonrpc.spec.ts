import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either';
import { DecodeError } from '../../src/errors';
import { decodeWith, parseJson } from '../../src/wire/decode';
import {
  classify,
  encodeErrorResponse,
  encodeNotification,
  encodeRequest,
  encodeResponse,
  ErrorCodes,
  inboundOf,
  JsonRpcMessage,
  parseInbound,
  UNATTRIBUTED_ERROR_ID,
} from '../../src/wire/jsonrpc';
import type { Inbound } from '../../src/wire/jsonrpc';
import { inboundFrame } from './arbitraries';
import { PROTOCOL_EXAMPLES } from './fixtures/protocol-examples';

/** The reference pipeline the hot path must agree with: JSON.parse, the io-ts union, classify. */
const viaCodec = (frame: string): E.Either<DecodeError, Inbound> =>
  E.map(classify)(E.chain(decodeWith(JsonRpcMessage))(parseJson(frame)));

const fromEither = <A>(either: E.Either<DecodeError, A>): A | undefined => (E.isRight(either) ? either.right : undefined);

describe('parseInbound', () => {
  it.each<[string, string, Inbound]>([
    ['a success response', '{"id":4,"result":{"status":"ready"}}', { type: 'response', id: 4, result: { status: 'ready' } }],
    ['a null result', '{"id":4,"result":null}', { type: 'response', id: 4, result: null }],
    [
      'an error response with data',
      '{"id":2,"error":{"code":-32603,"data":{"kind":"spawnNotFound"},"message":"No such file"}}',
      { type: 'error', id: 2, error: { code: -32603, message: 'No such file', data: { kind: 'spawnNotFound' } } },
    ],
    ['an unattributed error', '{"id":-1,"error":{"code":-32600,"message":"bad"}}', { type: 'error', id: UNATTRIBUTED_ERROR_ID, error: { code: -32600, message: 'bad' } }],
    [
      'a server request',
      '{"id":"s1","method":"network/policyRequest","params":{"processId":"p"}}',
      { type: 'request', id: 's1', method: 'network/policyRequest', params: { processId: 'p' } },
    ],
    ['a request without params', '{"id":3,"method":"environment/status"}', { type: 'request', id: 3, method: 'environment/status', params: undefined }],
    ['a notification', '{"method":"process/closed","params":{"processId":"p1","seq":5}}', { type: 'notification', method: 'process/closed', params: { processId: 'p1', seq: 5 } }],
    ['a notification with null params', '{"method":"initialized","params":null}', { type: 'notification', method: 'initialized', params: null }],
  ])('classifies %s', (_what, frame, expected) => {
    expect(parseInbound(frame)).toEqual(E.right(expected));
  });

  it.each([
    ['"2.0"', '{"jsonrpc":"2.0","id":1,"result":true}'],
    ['"1.0"', '{"jsonrpc":"1.0","id":1,"result":true}'],
    ['a number', '{"jsonrpc":2,"id":1,"result":true}'],
  ])('accepts and drops a jsonrpc member of %s', (_what, frame) => {
    expect(parseInbound(frame)).toEqual(E.right({ type: 'response', id: 1, result: true }));
  });

  it('drops trace and unknown envelope members', () => {
    expect(parseInbound('{"method":"m","params":{},"trace":{"traceparent":"00-x","tracestate":null},"extra":1}')).toEqual(
      E.right({ type: 'notification', method: 'm', params: {} }),
    );
  });

  it('drops unknown members of the error object', () => {
    expect(parseInbound('{"id":1,"error":{"code":1,"message":"m","extra":true}}')).toEqual(E.right({ type: 'error', id: 1, error: { code: 1, message: 'm' } }));
  });

  it.each<[string, string | number]>([
    ['a negative integer', -5],
    ['the largest safe integer', Number.MAX_SAFE_INTEGER],
    ['an empty string', ''],
    ['a string', 'abc'],
  ])('keeps the type of an id that is %s', (_what, id) => {
    expect(parseInbound(JSON.stringify({ id, result: 1 }))).toEqual(E.right({ type: 'response', id, result: 1 }));
  });

  it.each<[string, string, DecodeError]>([
    ['invalid JSON', '{not json', new DecodeError('JSON', ["Expected property name or '}' in JSON at position 1"])],
    [
      'a JSON array (batch)',
      '[1,2]',
      new DecodeError('JsonRpcMessage', [
        'Invalid value [1,2] supplied to : JsonRpcMessage/0: JsonRpcErrorResponse',
        'Invalid value [1,2] supplied to : JsonRpcMessage/1: JsonRpcResponse',
        'Invalid value [1,2] supplied to : JsonRpcMessage/2: JsonRpcRequest',
        'Invalid value [1,2] supplied to : JsonRpcMessage/3: JsonRpcNotification',
      ]),
    ],
    [
      'a float id',
      '{"id":1.5,"method":"m"}',
      new DecodeError('JsonRpcMessage', [
        'Invalid value 1.5 supplied to : JsonRpcMessage/0: JsonRpcErrorResponse/id: RequestId',
        'Invalid value undefined supplied to : JsonRpcMessage/0: JsonRpcErrorResponse/error: JsonRpcErrorObject',
        'Invalid value 1.5 supplied to : JsonRpcMessage/1: JsonRpcResponse/id: RequestId',
        'Invalid value undefined supplied to : JsonRpcMessage/1: JsonRpcResponse/result: Present',
        'Invalid value 1.5 supplied to : JsonRpcMessage/2: JsonRpcRequest/id: RequestId',
        'Invalid value 1.5 supplied to : JsonRpcMessage/3: JsonRpcNotification/id: Absent',
      ]),
    ],
    [
      'a null id',
      '{"id":null,"result":1}',
      new DecodeError('JsonRpcMessage', [
        'Invalid value 1 supplied to : JsonRpcMessage/0: JsonRpcErrorResponse/result: Absent',
        'Invalid value null supplied to : JsonRpcMessage/1: JsonRpcResponse/id: RequestId',
        'Invalid value 1 supplied to : JsonRpcMessage/2: JsonRpcRequest/result: Absent',
        'Invalid value null supplied to : JsonRpcMessage/3: JsonRpcNotification/id: Absent',
      ]),
    ],
    [
      'a boolean id',
      '{"id":true,"method":"x"}',
      new DecodeError('JsonRpcMessage', [
        'Invalid value true supplied to : JsonRpcMessage/0: JsonRpcErrorResponse/id: RequestId',
        'Invalid value undefined supplied to : JsonRpcMessage/0: JsonRpcErrorResponse/error: JsonRpcErrorObject',
        'Invalid value true supplied to : JsonRpcMessage/1: JsonRpcResponse/id: RequestId',
        'Invalid value undefined supplied to : JsonRpcMessage/1: JsonRpcResponse/result: Present',
        'Invalid value true supplied to : JsonRpcMessage/2: JsonRpcRequest/id: RequestId',
        'Invalid value true supplied to : JsonRpcMessage/3: JsonRpcNotification/id: Absent',
      ]),
    ],
    [
      'an error member that is not an error object',
      '{"id":1,"error":"bad"}',
      new DecodeError('JsonRpcMessage', [
        'Invalid value "bad" supplied to : JsonRpcMessage/0: JsonRpcErrorResponse/error: JsonRpcErrorObject',
        'Invalid value "bad" supplied to : JsonRpcMessage/1: JsonRpcResponse/error: Absent',
        'Invalid value "bad" supplied to : JsonRpcMessage/2: JsonRpcRequest/error: Absent',
        'Invalid value 1 supplied to : JsonRpcMessage/3: JsonRpcNotification/id: Absent',
      ]),
    ],
    [
      'a response with neither result nor error',
      '{"id":1}',
      new DecodeError('JsonRpcMessage', [
        'Invalid value undefined supplied to : JsonRpcMessage/0: JsonRpcErrorResponse/error: JsonRpcErrorObject',
        'Invalid value undefined supplied to : JsonRpcMessage/1: JsonRpcResponse/result: Present',
        'Invalid value undefined supplied to : JsonRpcMessage/2: JsonRpcRequest/method: string',
        'Invalid value 1 supplied to : JsonRpcMessage/3: JsonRpcNotification/id: Absent',
      ]),
    ],
  ])('rejects %s with a DecodeError naming the path', (_what, frame, expected) => {
    const result = parseInbound(frame);
    expect(result).toEqual(E.left(expected));
    expect(E.isLeft(result) && { what: result.left.what, details: result.left.details }).toEqual({ what: expected.what, details: expected.details });
  });

  it.each([
    ['a non-object', '"hello"'],
    ['null', 'null'],
    ['a float error code', '{"id":1,"error":{"code":1.5,"message":"m"}}'],
    ['an error without a message', '{"id":1,"error":{"code":1}}'],
    ['both result and error', '{"id":1,"result":1,"error":{"code":1,"message":"m"}}'],
    ['a numeric method', '{"id":1,"method":5}'],
    ['an id beyond 2^53', '{"id":18446744073709551615,"result":1}'],
    ['a notification with a null id', '{"id":null,"method":"m"}'],
  ])('rejects %s', (_what, frame) => {
    expect(E.isLeft(parseInbound(frame))).toBe(true);
  });

  it('agrees with decodeWith(JsonRpcMessage) + classify on any frame (property)', () => {
    const seen = { response: 0, error: 0, request: 0, notification: 0, rejected: 0 };
    fc.assert(
      fc.property(inboundFrame(), (frame) => {
        const expected = viaCodec(frame);
        seen[E.isRight(expected) ? expected.right.type : 'rejected'] += 1;
        expect(parseInbound(frame)).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
    // The generator must exercise every outcome, or the property proves little.
    expect(Object.values(seen).every((count) => count >= 50)).toBe(true);
  });

  it('has a hand-written guard that accepts exactly what the codec accepts (property)', () => {
    fc.assert(
      fc.property(inboundFrame(), (frame) => {
        const value: unknown = JSON.parse(frame);
        expect(inboundOf(value)).toEqual(fromEither(E.map(classify)(decodeWith(JsonRpcMessage)(value))));
      }),
      { numRuns: 2000 },
    );
  });

  const fixtureMessages = PROTOCOL_EXAMPLES.filter((example) => example.kind === 'message').map((example) => example.json);
  const namedFixtureMessages = PROTOCOL_EXAMPLES.filter((example) => example.kind === 'message').map((example) => [example.name, example.json] as const);
  const invalidId = fc.oneof(fc.double().filter((d) => !Number.isInteger(d)), fc.constantFrom(null, true, false, {}, [], 2 ** 60));
  const invalidErrorMember = fc
    .jsonValue({ maxDepth: 2 })
    .filter((e) => typeof e !== 'object' || e === null || Array.isArray(e) || !Number.isInteger(e['code']) || typeof e['message'] !== 'string');
  const rejectedByBoth = (message: Record<string, unknown>): void => {
    const frame = JSON.stringify(message);
    expect(E.isLeft(parseInbound(frame))).toBe(true);
    expect(E.isLeft(viaCodec(frame))).toBe(true);
  };

  it('rejects every fixture message once its id is made invalid (property)', () => {
    fc.assert(fc.property(fc.constantFrom(...fixtureMessages), invalidId, (frame, id) => rejectedByBoth({ ...JSON.parse(frame), id })));
  });

  it('rejects every fixture message once it carries a malformed error member (property)', () => {
    fc.assert(fc.property(fc.constantFrom(...fixtureMessages), invalidErrorMember, (frame, error) => rejectedByBoth({ ...JSON.parse(frame), error })));
  });

  it.each(namedFixtureMessages)('rejects fixture "%s" without its result, error and method', (_name, frame) => {
    rejectedByBoth(Object.fromEntries(Object.entries(JSON.parse(frame)).filter(([k]) => k !== 'result' && k !== 'error' && k !== 'method')));
  });

  it.each(namedFixtureMessages)('rejects fixture "%s" with both a result and an error', (_name, frame) => {
    rejectedByBoth({ ...JSON.parse(frame), result: 1, error: { code: 1, message: 'x' } });
  });
});

describe('JSON-RPC encoders', () => {
  it('writes a request without a jsonrpc member', () => {
    expect(JSON.parse(encodeRequest(1, 'initialize', { clientName: 'spec' }))).toEqual({ id: 1, method: 'initialize', params: { clientName: 'spec' } });
  });

  it('omits params of a request when they are undefined', () => {
    expect(encodeRequest(2, 'environment/status', undefined)).toBe('{"id":2,"method":"environment/status"}');
  });

  it('writes a response, with undefined results sent as null', () => {
    expect(JSON.parse(encodeResponse('s1', { decision: { type: 'allow' } }))).toEqual({ id: 's1', result: { decision: { type: 'allow' } } });
    expect(JSON.parse(encodeResponse(3, undefined))).toEqual({ id: 3, result: null });
  });

  it('writes an error response, with data only when given', () => {
    expect(JSON.parse(encodeErrorResponse(4, ErrorCodes.MethodNotFound, 'nope'))).toEqual({ id: 4, error: { code: -32601, message: 'nope' } });
    expect(JSON.parse(encodeErrorResponse(4, ErrorCodes.InternalError, 'x', { kind: 'k' }))).toEqual({
      id: 4,
      error: { code: -32603, message: 'x', data: { kind: 'k' } },
    });
  });

  it('writes a notification, omitting undefined params', () => {
    expect(JSON.parse(encodeNotification('initialized', {}))).toEqual({ method: 'initialized', params: {} });
    expect(encodeNotification('initialized', undefined)).toBe('{"method":"initialized"}');
  });

  it('round-trips what it writes through parseInbound (property)', () => {
    const id = fc.oneof(fc.nat(), fc.string({ maxLength: 5 }));
    const json = fc.jsonValue({ maxDepth: 2 });
    fc.assert(
      fc.property(id, fc.string({ maxLength: 8 }), json, json, fc.integer(), (anId, method, params, result, code) => {
        const roundTrip = (frame: string): unknown => parseInbound(frame);
        const normalised = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
        expect(roundTrip(encodeRequest(anId, method, params))).toEqual(E.right({ type: 'request', id: anId, method, params: normalised(params) }));
        expect(roundTrip(encodeNotification(method, params))).toEqual(E.right({ type: 'notification', method, params: normalised(params) }));
        expect(roundTrip(encodeResponse(anId, result))).toEqual(E.right({ type: 'response', id: anId, result: normalised(result) }));
        expect(roundTrip(encodeErrorResponse(anId, code, method))).toEqual(E.right({ type: 'error', id: anId, error: { code, message: method } }));
      }),
    );
  });
});

describe('ErrorCodes', () => {
  it('names the codes of docs/protocol.md#error-codes', () => {
    expect(ErrorCodes).toEqual({
      InvalidRequest: -32600,
      MethodNotFound: -32601,
      InvalidParams: -32602,
      InternalError: -32603,
      NotFound: -32004,
      SessionAlreadyAttached: -32010,
      TransportClosed: -32000,
    });
    expect(UNATTRIBUTED_ERROR_ID).toBe(-1);
  });
});
