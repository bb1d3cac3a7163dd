import type * as t from 'io-ts';
import * as E from 'fp-ts/lib/Either';
import type { DecodeError } from '../errors';
import {
  CapabilitiesDiscoverV2Params,
  CapabilitiesDiscoverV2Response,
  CapabilityRootsDiscoverV1Params,
  CapabilityRootsDiscoverV1Response,
} from './capabilities';
import { decodeWith } from './decode';
import { environmentStatusOf, execResponseOf, terminateResponseOf, writeResponseOf } from './fast-results';
import {
  EnvironmentConfigReadParams,
  EnvironmentConfigReadResponse,
  EnvironmentInfoResponse,
  EnvironmentStatusResponse,
} from './environment';
import * as fs from './fs';
import { HttpBodyDeltaNotification, HttpRequestParams, HttpRequestResponse } from './http';
import { InitializedParams, InitializeParams, InitializeResponse } from './initialize';
import { NetworkPolicyDecisionNotification, NetworkPolicyRequestParams, NetworkPolicyRequestResponse } from './network';
import { NoParams } from './no-params';
import * as p from './process';

/** One row of {@link METHODS}: the params and result codecs, and whether a call may be sent twice. */
export interface MethodSpec {
  readonly params: t.Mixed;
  readonly result: t.Mixed;
  /**
   * Safe to send again after an ambiguous disconnect (the reply may or may not have been lost): the
   * cursor read, a write with its same `writeId` (the executor dedupes), and terminate. Nothing else.
   */
  readonly replayable: boolean;
}

/** Every request method the 0.171.0 executor implements (docs/protocol.md#methods), keyed by its wire name. */
export const METHODS = {
  initialize: { params: InitializeParams, result: InitializeResponse, replayable: false },
  'environment/status': { params: NoParams, result: EnvironmentStatusResponse, replayable: false },
  'environment/info': { params: NoParams, result: EnvironmentInfoResponse, replayable: false },
  'environmentConfig/read': { params: EnvironmentConfigReadParams, result: EnvironmentConfigReadResponse, replayable: false },
  'process/start': { params: p.ExecParams, result: p.ExecResponse, replayable: false },
  'process/read': { params: p.ReadParams, result: p.ReadResponse, replayable: true },
  'process/write': { params: p.WriteParams, result: p.WriteResponse, replayable: true },
  'process/signal': { params: p.SignalParams, result: p.SignalResponse, replayable: false },
  'process/terminate': { params: p.TerminateParams, result: p.TerminateResponse, replayable: true },
  'fs/readFile': { params: fs.FsReadFileParams, result: fs.FsReadFileResponse, replayable: false },
  'fs/writeFile': { params: fs.FsWriteFileParams, result: fs.FsEmptyResponse, replayable: false },
  'fs/createDirectory': { params: fs.FsCreateDirectoryParams, result: fs.FsEmptyResponse, replayable: false },
  'fs/getMetadata': { params: fs.FsGetMetadataParams, result: fs.FsGetMetadataResponse, replayable: false },
  'fs/canonicalize': { params: fs.FsCanonicalizeParams, result: fs.FsCanonicalizeResponse, replayable: false },
  'fs/readDirectory': { params: fs.FsReadDirectoryParams, result: fs.FsReadDirectoryResponse, replayable: false },
  'fs/walk': { params: fs.FsWalkParams, result: fs.FsWalkResponse, replayable: false },
  'fs/remove': { params: fs.FsRemoveParams, result: fs.FsEmptyResponse, replayable: false },
  'fs/copy': { params: fs.FsCopyParams, result: fs.FsEmptyResponse, replayable: false },
  'fs/open': { params: fs.FsOpenParams, result: fs.FsOpenResponse, replayable: false },
  'fs/readBlock': { params: fs.FsReadBlockParams, result: fs.FsReadBlockResponse, replayable: false },
  'fs/writeBlock': { params: fs.FsWriteBlockParams, result: fs.FsEmptyResponse, replayable: false },
  'fs/close': { params: fs.FsCloseParams, result: fs.FsEmptyResponse, replayable: false },
  'fs/watchMissing': { params: fs.FsWatchMissingParams, result: fs.FsWatchMissingResponse, replayable: false },
  'http/request': { params: HttpRequestParams, result: HttpRequestResponse, replayable: false },
  'capabilityRoots/discoverV1': { params: CapabilityRootsDiscoverV1Params, result: CapabilityRootsDiscoverV1Response, replayable: false },
  'capabilities/discoverV2': { params: CapabilitiesDiscoverV2Params, result: CapabilitiesDiscoverV2Response, replayable: false },
} as const satisfies Record<string, MethodSpec>;

/**
 * A request method's wire name: one of the methods the 0.171.0 executor implements.
 * @useDeclaredType
 */
export type MethodName = keyof typeof METHODS;
/** A method's params on our side (bytes as `Uint8Array`; `undefined` for a method without params). */
export type ParamsOf<M extends MethodName> = t.TypeOf<(typeof METHODS)[M]['params']>;
/** A method's decoded result (bytes as `Uint8Array`). */
export type ResultOf<M extends MethodName> = t.TypeOf<(typeof METHODS)[M]['result']>;

/** Whether `name` is a request method of {@link METHODS}. */
export const isMethodName = (name: string): name is MethodName => Object.prototype.hasOwnProperty.call(METHODS, name);

/** The wire form of `params` (bytes become base64; unknown keys are dropped); `undefined` for methods without params. */
export function encodeParams<M extends MethodName>(method: M, params: ParamsOf<M>): unknown {
  const spec: MethodSpec = METHODS[method];
  return spec.params.encode(params);
}

type ResultDecoder = (result: unknown) => E.Either<DecodeError, unknown>;

const FAST_RESULTS: Readonly<Partial<Record<MethodName, (result: unknown) => unknown>>> = {
  'environment/status': environmentStatusOf,
  'process/write': writeResponseOf,
  'process/terminate': terminateResponseOf,
  'process/start': execResponseOf,
};

/** One decoder per method, made once: the hand-written one first (`./fast-results`), then the codec. */
const RESULT_DECODERS = Object.fromEntries(
  (Object.keys(METHODS) as MethodName[]).map((method): [MethodName, ResultDecoder] => {
    const codec = decodeWith<unknown, unknown>((METHODS[method] as MethodSpec).result);
    const fast = FAST_RESULTS[method];
    if (fast === undefined) return [method, codec];
    return [method, (result) => {
      const decoded = fast(result);
      return decoded === undefined ? codec(result) : E.right(decoded);
    }];
  }),
) as Readonly<Record<MethodName, ResultDecoder>>;

/** Decodes a method's `result`; the {@link DecodeError} names the failing paths. */
export function decodeResult<M extends MethodName>(method: M, result: unknown): E.Either<DecodeError, ResultOf<M>> {
  return RESULT_DECODERS[method](result) as E.Either<DecodeError, ResultOf<M>>;
}

/** {@link decodeResult} without the Either (every reply goes through it): the result, or the DecodeError. */
export function decodeResultOrError<M extends MethodName>(method: M, result: unknown): ResultOf<M> | DecodeError {
  const fast = FAST_RESULTS[method]?.(result);
  if (fast !== undefined) return fast as ResultOf<M>;
  const decoded = decodeResult(method, result);
  return E.isLeft(decoded) ? decoded.left : decoded.right;
}

/** Whether a call of `method` may be sent again after an ambiguous disconnect ({@link MethodSpec.replayable}). */
export const isReplayable = (method: MethodName): boolean => METHODS[method].replayable;

/** The notifications the executor sends (docs/protocol.md#methods), keyed by method, with their params codecs. */
export const NOTIFICATIONS = {
  'process/output': p.ProcessOutputNotification,
  'process/exited': p.ProcessExitedNotification,
  'process/closed': p.ProcessClosedNotification,
  'fs/missingChanged': fs.FsMissingChangedNotification,
  'http/request/bodyDelta': HttpBodyDeltaNotification,
  'network/policyDecision': NetworkPolicyDecisionNotification,
} as const satisfies Record<string, t.Mixed>;

/** A notification method the executor sends. Anything else is to be logged and ignored. */
export type NotificationMethod = keyof typeof NOTIFICATIONS;
/** A notification's decoded params. */
export type NotificationParamsOf<N extends NotificationMethod> = t.TypeOf<(typeof NOTIFICATIONS)[N]>;
/** A decoded notification, tagged by `method` (a union when `N` is): switch on `method` exhaustively. */
export type NotificationOf<N extends NotificationMethod = NotificationMethod> = {
  readonly [K in N]: { readonly method: K; readonly params: NotificationParamsOf<K> };
}[N];

/** Whether `method` is one of {@link NOTIFICATIONS}. */
export const isNotificationMethod = (method: string): method is NotificationMethod =>
  Object.prototype.hasOwnProperty.call(NOTIFICATIONS, method);

/** The notifications that carry one process's events (each names its `processId` and `seq`). */
export type ProcessNotificationMethod = Extract<NotificationMethod, 'process/output' | 'process/exited' | 'process/closed'>;
/** The other notifications the executor sends: not a process's events, so they are subscribed to by method. */
export type ConnectionNotificationMethod = Exclude<NotificationMethod, ProcessNotificationMethod>;

/** Decodes one notification's params: a {@link DecodeError} naming the failing paths, or the decoded params. */
type ParamsDecoder<N extends NotificationMethod> = (params: unknown) => E.Either<DecodeError, NotificationParamsOf<N>>;

/** One params decoder per notification, made once (the router decodes `process/output` by hand first). */
const NOTIFICATION_DECODERS: { readonly [N in NotificationMethod]: ParamsDecoder<N> } = {
  'process/output': p.decodeProcessOutput,
  'process/exited': decodeWith(p.ProcessExitedNotification),
  'process/closed': decodeWith(p.ProcessClosedNotification),
  'fs/missingChanged': decodeWith(fs.FsMissingChangedNotification),
  'http/request/bodyDelta': decodeWith(HttpBodyDeltaNotification),
  'network/policyDecision': decodeWith(NetworkPolicyDecisionNotification),
};

/** Decodes a known notification's params, typed by its method (the router decodes `process/output` by hand first). */
export function decodeNotificationParams<N extends NotificationMethod>(method: N, params: unknown): E.Either<DecodeError, NotificationParamsOf<N>> {
  const decode: ParamsDecoder<N> = NOTIFICATION_DECODERS[method];
  return decode(params);
}

/** {@link decodeNotificationParams}, tagged by `method`. */
export function decodeNotification<N extends NotificationMethod>(method: N, params: unknown): E.Either<DecodeError, NotificationOf<N>> {
  return E.map((decodedParams: NotificationParamsOf<N>) => ({ method, params: decodedParams }) as NotificationOf<N>)(decodeNotificationParams(method, params));
}

/** The requests the executor sends us (docs/protocol.md#server-requests). Answer any other method with -32601. */
export const SERVER_REQUESTS = {
  'network/policyRequest': { params: NetworkPolicyRequestParams, result: NetworkPolicyRequestResponse },
} as const satisfies Record<string, { readonly params: t.Mixed; readonly result: t.Mixed }>;

/** A server→client request method. */
export type ServerRequestMethod = keyof typeof SERVER_REQUESTS;
/** A server request's decoded params. */
export type ServerRequestParamsOf<S extends ServerRequestMethod> = t.TypeOf<(typeof SERVER_REQUESTS)[S]['params']>;
/** The result we answer a server request with. */
export type ServerRequestResultOf<S extends ServerRequestMethod> = t.TypeOf<(typeof SERVER_REQUESTS)[S]['result']>;

/** Whether `method` is one of {@link SERVER_REQUESTS}. */
export const isServerRequestMethod = (method: string): method is ServerRequestMethod =>
  Object.prototype.hasOwnProperty.call(SERVER_REQUESTS, method);

/** Decodes a server request's params. */
export function decodeServerRequestParams<S extends ServerRequestMethod>(method: S, params: unknown): E.Either<DecodeError, ServerRequestParamsOf<S>> {
  const codec: t.Mixed = SERVER_REQUESTS[method].params;
  return decodeWith<ServerRequestParamsOf<S>, unknown>(codec)(params);
}

/** The wire form of our answer to a server request. */
export function encodeServerRequestResult<S extends ServerRequestMethod>(method: S, result: ServerRequestResultOf<S>): unknown {
  const codec: t.Mixed = SERVER_REQUESTS[method].result;
  return codec.encode(result);
}

/** The notifications we send (only `initialized`; any other closes the connection), with their params codecs. */
export const CLIENT_NOTIFICATIONS = {
  initialized: InitializedParams,
} as const satisfies Record<string, t.Mixed>;
