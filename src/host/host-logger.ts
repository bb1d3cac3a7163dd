/**
 * The host's logger seam: what host code writes to, with a level, a message and fields (the environment
 * id and generation where one applies). The host never imports a logging library: `exec-rx host` adapts
 * pino to this interface (see `src/cli/host-log.ts`); an embedder passes its own, or a `(line) => void`.
 * No token, signature, secret or process environment value is ever given to it, as a message or a field.
 */

/** A field's value: ids, counts, flags, an argv. Never a secret. */
export type LogFieldValue = string | number | boolean | null | readonly string[] | undefined;

/** The fields of one log line. `environmentId` and `generation` are set where an environment applies. */
export interface LogFields {
  /** The environment the line is about, where one applies. */
  readonly environmentId?: string | undefined;
  /** Its generation (a new executor connection after a failure is a new one), where one applies. */
  readonly generation?: number | undefined;
  readonly [name: string]: LogFieldValue;
}

/** Where the host writes what happens, one call per line. Each method takes the line's fields and its message. */
export interface HostLogger {
  /** Detail an operator seldom needs (stdin writes, for one). */
  debug(fields: LogFields, msg: string): void;
  /** What happens: a registration accepted, a state change, an act through the operator API. */
  info(fields: LogFields, msg: string): void;
  /** Something refused or odd, that the host goes on after: a registration refused, a diagnostic. */
  warn(fields: LogFields, msg: string): void;
  /** Something failed: an output log that cannot write, a request that failed on the host's side. */
  error(fields: LogFields, msg: string): void;
}

/** What `HostServerOptions.log` accepts: a {@link HostLogger}, or a function given each line's message (debug lines left out). */
export type HostLogOption = HostLogger | ((line: string) => void);

/** A logger that drops every line. */
export const SILENT_LOGGER: HostLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** The {@link HostLogger} of a `log` option: itself, or one writing each message (but debug ones) to a line function. */
export function hostLoggerOf(log: HostLogOption | undefined): HostLogger {
  if (log === undefined) return SILENT_LOGGER;
  if (typeof log !== 'function') return log;
  const line = (_fields: LogFields, msg: string): void => log(msg);
  return { debug: () => undefined, info: line, warn: line, error: line };
}

/** A logger that adds `fields` to each line of `logger` (a line's own fields win). */
export function withFields(logger: HostLogger, fields: LogFields): HostLogger {
  return {
    debug: (own, msg) => logger.debug({ ...fields, ...own }, msg),
    info: (own, msg) => logger.info({ ...fields, ...own }, msg),
    warn: (own, msg) => logger.warn({ ...fields, ...own }, msg),
    error: (own, msg) => logger.error({ ...fields, ...own }, msg),
  };
}
