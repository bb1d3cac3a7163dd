/**
 * The closed set of error codes: switch on `error.code`; the set only grows on purpose. Every class in
 * this room names one of them.
 */

/** The closed set of error codes. Switch on `error.code`; the set only grows on purpose. */
export type ExecClientErrorCode =
  | 'TRANSPORT_CLOSED'
  | 'CONNECT_FAILED'
  | 'AUTHENTICATION_FAILED'
  | 'DIAL_HEADERS_FAILED'
  | 'DECODE_FAILED'
  | 'RPC_ERROR'
  | 'NOT_FOUND'
  | 'SPAWN_FAILED'
  | 'REQUEST_TIMEOUT'
  | 'FRAME_TOO_LARGE'
  | 'PROTOCOL_ERROR'
  | 'ENVIRONMENT_RECOVERING'
  | 'ENVIRONMENT_ELSEWHERE'
  | 'RESUME_FAILED'
  | 'ENVIRONMENT_FAILED'
  | 'REPLACEMENT_REJECTED'
  | 'PROCESS_FAILED'
  | 'PROCESS_GAP'
  | 'REORDER_OVERFLOW'
  | 'CONSUMER_OVERFLOW'
  | 'HANDLE_LOST'
  | 'CLOSED'
  | 'INVALID_TTY_SIZE'
  | 'RESIZE_FAILED'
  | 'CANNOT_START'
  | 'HELPER_FAILED'
  | 'CONFIG_INVALID'
  | 'EXECUTOR_START_FAILED'
  | 'EXECUTOR_EXITED'
  | 'LOG_WRITE_FAILED'
  | 'LOG_READ_FAILED'
  | 'STALE_EPOCH'
  | 'STALE_CLAIM'
  | 'STORE_UNAVAILABLE'
  | 'STORE_SCRIPT_FAILED'
  | OperatorApiErrorCode;

/**
 * The codes of the host's operator API (`exec-rx host`, `/api/v1`): its problem+json answers carry
 * these, or one of the library's codes above when a library call failed.
 */
export type OperatorApiErrorCode =
  | 'UNAUTHORIZED'
  | 'FORBIDDEN_ROLE'
  | 'FORBIDDEN_ENVIRONMENT'
  | 'FORBIDDEN_ORIGIN'
  | 'ROUTE_NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'ENVIRONMENT_NOT_FOUND'
  | 'PROCESS_NOT_FOUND'
  | 'PROCESS_GONE'
  | 'INVALID_ID'
  | 'MALFORMED_JSON'
  | 'INVALID_REQUEST'
  | 'BODY_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'START_UNKNOWN'
  | 'WRITE_ID_REUSED'
  | 'STDIN_CLOSED'
  | 'PROCESS_RUNNING'
  | 'TOO_MANY_REQUESTS'
  | 'TOO_MANY_STREAMS'
  | 'HOST_ERROR'
  | 'HOST_UNREACHABLE'
  | 'FORWARD_FAILED'
  | 'FORWARD_REFUSED';
