import * as t from 'io-ts';
import * as E from 'fp-ts/lib/Either';
import type { DecodeError } from '../errors';
import { decodeWith, parseJson } from './decode';
import { Integer } from './integer';
import { Present, withoutKeys } from './presence';
import { struct } from './struct';

/**
 * A JSON-RPC request id: an integer or a string (`""` included). Floats, `null` and booleans are
 * rejected, as the executor rejects them. Integers beyond ±(2^53 − 1) are rejected too: JavaScript
 * cannot echo them back exactly (the executor accepts the whole i64 range, but it only ever echoes
 * ids we chose, and we choose small positive ones).
 */
export type RequestId = number | string;

/** Whether `u` is a valid {@link RequestId}. Shared by the codec and the hot-path classifier. */
export const isRequestId = (u: unknown): u is RequestId => typeof u === 'string' || Number.isSafeInteger(u);

/** Codec of {@link RequestId}. @hidden */
export const RequestId: t.Type<RequestId, RequestId, unknown> = new t.Type<RequestId, RequestId, unknown>(
  'RequestId',
  isRequestId,
  (u, c) => (isRequestId(u) ? t.success(u) : t.failure(u, c)),
  t.identity,
);

/** The `error` member of an error response: an integer `code`, a `message`, optional `data`. @hidden */
export const JsonRpcErrorObject = struct(
  'JsonRpcErrorObject',
  {
    /** The JSON-RPC error code (-32600 invalid request, -32602 invalid params, -32603 internal, ...). */
    code: Integer,
    /** What went wrong. */
    message: t.string,
  },
  {
    /** Structured detail, as sent (e.g. `{kind}` of a spawn failure). */
    data: t.unknown,
  },
);
/**
 * The `error` member of a JSON-RPC error response.
 * @interface
 */
export type JsonRpcErrorObject = t.TypeOf<typeof JsonRpcErrorObject>;

// The envelope codecs. The codex dialect never sends `jsonrpc`; one on input is accepted and ignored
// (any value), like `trace` and any other unknown member. A message's kind follows from its keys:
// `error` or `result` make it a response (exactly one of them, and a valid id), otherwise `method`
// makes it a request (with `id`) or a notification (without). Each codec refuses the keys of the
// other kinds, so `{"id":1,"error":"bad"}` is rejected instead of passing as something else.
// `params` and `trace` may be missing: `t.unknown` accepts a missing key, which is wanted here.
const Optional = { params: t.unknown, trace: t.unknown };

/** `{id, error}`: the executor refused a request (or could not parse a message: id `-1`). */
export const JsonRpcErrorResponse = withoutKeys('JsonRpcErrorResponse', ['result'], t.type({ id: RequestId, error: JsonRpcErrorObject }));
/** `{id, error}`. */
export type JsonRpcErrorResponse = t.TypeOf<typeof JsonRpcErrorResponse>;

/** `{id, result}`: `result` must be present; it may be `null`. */
export const JsonRpcResponse = withoutKeys('JsonRpcResponse', ['error'], t.type({ id: RequestId, result: Present }));
/** `{id, result}`. */
export type JsonRpcResponse = t.TypeOf<typeof JsonRpcResponse>;

/** `{id, method, params?, trace?}`. */
export const JsonRpcRequest = withoutKeys(
  'JsonRpcRequest',
  ['result', 'error'],
  t.type({ id: RequestId, method: t.string, ...Optional }),
);
/** `{id, method, params?, trace?}`. */
export type JsonRpcRequest = t.TypeOf<typeof JsonRpcRequest>;

/** `{method, params?, trace?}` with no `id` at all. */
export const JsonRpcNotification = withoutKeys(
  'JsonRpcNotification',
  ['id', 'result', 'error'],
  t.type({ method: t.string, ...Optional }),
);
/** `{method, params?, trace?}`. */
export type JsonRpcNotification = t.TypeOf<typeof JsonRpcNotification>;

/** Any JSON-RPC message, most specific member first. Batches (arrays) are not part of the protocol. */
export const JsonRpcMessage = t.union([JsonRpcErrorResponse, JsonRpcResponse, JsonRpcRequest, JsonRpcNotification], 'JsonRpcMessage');
/** Any JSON-RPC message. */
export type JsonRpcMessage = t.TypeOf<typeof JsonRpcMessage>;

/** An inbound message, tagged by `type`. `params` is `undefined` when the message had none. */
export type Inbound =
  | {
      /** A success response to one of our requests. */
      readonly type: 'response';
      /** The id of the request it answers. */
      readonly id: RequestId;
      /** The result, not yet decoded. */
      readonly result: unknown;
    }
  | {
      /** An error response to one of our requests (id -1: to something the executor could not parse). */
      readonly type: 'error';
      /** The id of the request it answers. */
      readonly id: RequestId;
      /** The error. */
      readonly error: JsonRpcErrorObject;
    }
  | {
      /** A request from the executor to us (`network/policyRequest`). */
      readonly type: 'request';
      /** Its id, echoed in our answer. */
      readonly id: RequestId;
      /** Its method. */
      readonly method: string;
      /** Its params, not yet decoded. */
      readonly params: unknown;
    }
  | {
      /** A notification (`process/output`, ...). */
      readonly type: 'notification';
      /** Its method. */
      readonly method: string;
      /** Its params, not yet decoded. */
      readonly params: unknown;
    };

/** Tags a decoded {@link JsonRpcMessage}; unknown envelope members (`jsonrpc`, `trace`) are dropped. */
export function classify(m: JsonRpcMessage): Inbound {
  if ('error' in m) return { type: 'error', id: m.id, error: m.error };
  if ('result' in m) return { type: 'response', id: m.id, result: m.result };
  if ('id' in m) return { type: 'request', id: m.id, method: m.method, params: m.params };
  return { type: 'notification', method: m.method, params: m.params };
}

const errorObjectOf = (u: unknown): JsonRpcErrorObject | undefined => {
  if (typeof u !== 'object' || u === null || Array.isArray(u)) return undefined;
  const { code, message, data } = u as { readonly [key: string]: unknown };
  if (typeof code !== 'number' || !Number.isInteger(code) || typeof message !== 'string') return undefined;
  return data === undefined ? { code, message } : { code, message, data };
};

/**
 * The hot-path classifier: what `decodeWith(JsonRpcMessage)` followed by {@link classify} returns for
 * a value produced by `JSON.parse`, or `undefined` where that decode fails — with typeof checks only
 * (about 12 ns instead of about 720 ns for the io-ts union). A property spec holds the two equal.
 */
export function inboundOf(value: unknown): Inbound | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { id, method, result, error, params } = value as { readonly [key: string]: unknown };
  if (error !== undefined) {
    if (result !== undefined || !isRequestId(id)) return undefined;
    const e = errorObjectOf(error);
    return e === undefined ? undefined : { type: 'error', id, error: e };
  }
  if (result !== undefined) return isRequestId(id) ? { type: 'response', id, result } : undefined;
  if (typeof method !== 'string') return undefined;
  if (id === undefined) return { type: 'notification', method, params };
  return isRequestId(id) ? { type: 'request', id, method, params } : undefined;
}

/**
 * Parses and classifies one inbound frame. Valid frames take the hand-written {@link inboundOf}; a
 * frame it refuses is decoded again with the io-ts codec, only to build the {@link DecodeError} that
 * names the failing paths (what: `JSON` for invalid JSON, `JsonRpcMessage` otherwise).
 */
export function parseInbound(frame: string): E.Either<DecodeError, Inbound> {
  const parsed = parseJson(frame);
  return E.isLeft(parsed) ? parsed : classifyParsed(parsed.right);
}

/** {@link parseInbound} of a value `JSON.parse` already made. */
export function classifyParsed(value: unknown): E.Either<DecodeError, Inbound> {
  const inbound = inboundOf(value);
  return inbound === undefined ? E.map(classify)(decodeWith(JsonRpcMessage)(value)) : E.right(inbound);
}

/** Serialises a request; `params` is omitted when `undefined`. Throws a TypeError on values JSON cannot hold. */
export function encodeRequest(id: RequestId, method: string, params: unknown): string {
  return JSON.stringify(params === undefined ? { id, method } : { id, method, params });
}

/** Serialises a success response (to a server→client request); an `undefined` result is sent as `null`. */
export function encodeResponse(id: RequestId, result: unknown): string {
  return JSON.stringify({ id, result: result === undefined ? null : result });
}

/** Serialises an error response (to a server→client request); `data` is omitted when `undefined`. */
export function encodeErrorResponse(id: RequestId, code: number, message: string, data?: unknown): string {
  return JSON.stringify({ id, error: data === undefined ? { code, message } : { code, message, data } });
}

/** Serialises a notification (we only ever send `initialized`); `params` is omitted when `undefined`. */
export function encodeNotification(method: string, params: unknown): string {
  return JSON.stringify(params === undefined ? { method } : { method, params });
}

/** The JSON-RPC error codes the executor uses (docs/protocol.md#error-codes). */
export const ErrorCodes = {
  /**
   * Invalid request: unparsable messages (with id `-1`), lifecycle gating (`client must call initialize
   * before ...`), `unknown session id`, `unknown process id`, `process <id> already exists`, and
   * filesystem semantic errors (`path ... is not a file`, bad `fs/writeFile` base64, ...).
   */
  InvalidRequest: -32600,
  /** Method not found: `exec-server stub does not implement \`<method>\` yet`. */
  MethodNotFound: -32601,
  /** Invalid params: serde messages (`missing field`, `unknown variant`), empty `argv`/`writeId`, invalid URIs, bad `process/write` base64. */
  InvalidParams: -32602,
  /** Internal error: spawn failures (with `data.kind`), I/O errors, `failed to write to process stdin`, `http/request failed`. */
  InternalError: -32603,
  /** Not found (filesystem): a missing path, or an unknown file handle. */
  NotFound: -32004,
  /** `session <id> is already attached to another connection`: a resume refused for now; retryable. */
  SessionAlreadyAttached: -32010,
  /** `JSON-RPC transport closed`: codex's client reads it as a transport closure (relays); the 0.171.0 server never sent it. */
  TransportClosed: -32000,
} as const;

/** The id the executor puts on errors it cannot attribute to a request (unparsable input). Never use it ourselves. */
export const UNATTRIBUTED_ERROR_ID = -1;
