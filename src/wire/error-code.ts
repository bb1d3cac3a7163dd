/**
 * The library's error codes on the wire (a problem's `code`, a `failed` event's): the closed set of
 * `ExecClientErrorCode` as a codec, so a code read back from a host is one the type names, never a
 * string cast into it. The object below must name every code and nothing else: the compiler checks it
 * against the type, so the set and the codec cannot drift apart.
 */
import * as t from 'io-ts';
import type { ExecClientErrorCode } from '../errors';

const CODES: Readonly<Record<ExecClientErrorCode, null>> = {
  TRANSPORT_CLOSED: null,
  CONNECT_FAILED: null,
  AUTHENTICATION_FAILED: null,
  DIAL_HEADERS_FAILED: null,
  DECODE_FAILED: null,
  RPC_ERROR: null,
  NOT_FOUND: null,
  SPAWN_FAILED: null,
  REQUEST_TIMEOUT: null,
  FRAME_TOO_LARGE: null,
  PROTOCOL_ERROR: null,
  ENVIRONMENT_RECOVERING: null,
  ENVIRONMENT_ELSEWHERE: null,
  RESUME_FAILED: null,
  ENVIRONMENT_FAILED: null,
  REPLACEMENT_REJECTED: null,
  PROCESS_FAILED: null,
  PROCESS_GAP: null,
  REORDER_OVERFLOW: null,
  CONSUMER_OVERFLOW: null,
  HANDLE_LOST: null,
  CLOSED: null,
  INVALID_TTY_SIZE: null,
  RESIZE_FAILED: null,
  CANNOT_START: null,
  HELPER_FAILED: null,
  CONFIG_INVALID: null,
  EXECUTOR_START_FAILED: null,
  EXECUTOR_EXITED: null,
  LOG_WRITE_FAILED: null,
  LOG_READ_FAILED: null,
  STALE_EPOCH: null,
  STALE_CLAIM: null,
  STORE_UNAVAILABLE: null,
  STORE_SCRIPT_FAILED: null,
  UNAUTHORIZED: null,
  FORBIDDEN_ROLE: null,
  FORBIDDEN_ENVIRONMENT: null,
  FORBIDDEN_ORIGIN: null,
  ROUTE_NOT_FOUND: null,
  METHOD_NOT_ALLOWED: null,
  ENVIRONMENT_NOT_FOUND: null,
  PROCESS_NOT_FOUND: null,
  PROCESS_GONE: null,
  INVALID_ID: null,
  MALFORMED_JSON: null,
  INVALID_REQUEST: null,
  BODY_TOO_LARGE: null,
  UNSUPPORTED_MEDIA_TYPE: null,
  IDEMPOTENCY_KEY_REUSED: null,
  START_UNKNOWN: null,
  WRITE_ID_REUSED: null,
  STDIN_CLOSED: null,
  PROCESS_RUNNING: null,
  TOO_MANY_REQUESTS: null,
  TOO_MANY_STREAMS: null,
  HOST_ERROR: null,
  HOST_UNREACHABLE: null,
  FORWARD_FAILED: null,
  FORWARD_REFUSED: null,
};

/** One of the library's error codes (or the operator API's own): anything else does not decode. */
export const ErrorCode = t.keyof(CODES, 'ErrorCode');
