/**
 * `exec-rx host`'s logs: pino behind the host's logger seam (`HostLogger`, see `../host/host-logger`), the
 * one file that imports it. JSON lines (`{"level":"info","time":"…","pid":…,"msg":"…","environmentId":…}`)
 * for a journal or a collector, or readable lines on a terminal (a formatter of our own, no pino-pretty).
 * The audit trail goes to the same stream, or to a file of its own (appended, 0600).
 */
import { closeSync, fchmodSync, openSync, writeSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { ConfigError } from '../errors';
import type { HostLogger, LogFields } from '../host/host-logger';
import type { HostLogLevel } from './args';

/** A destination of log lines: one whole line (with its newline) per call. */
export interface LogSink {
  write(line: string): void;
}

/** The fields pino writes itself; the readable format shows them its own way. */
const OWN_FIELDS: ReadonlySet<string> = new Set(['level', 'time', 'pid', 'msg']);

/** One readable line of a JSON log line: `12:00:00.123 INFO  msg key=value …` (a line that is not JSON, as it is). */
export function prettyLine(json: string): string {
  let record: unknown;
  try {
    record = JSON.parse(json);
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  if (typeof record !== 'object' || record === null) return `${json.trimEnd()}\n`;
  const entries = Object.entries(record);
  const field = (name: string): unknown => entries.find(([key]) => key === name)?.[1];
  const time = String(field('time') ?? '');
  const clock = /T(\d\d:\d\d:\d\d\.\d+)/.exec(time)?.[1] ?? time;
  const level = String(field('level') ?? '').toUpperCase().padEnd(5);
  const rest = entries
    .filter(([key, value]) => !OWN_FIELDS.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  return `${clock} ${level} ${String(field('msg') ?? '')}${rest === '' ? '' : `  ${rest}`}\n`;
}

/** A pino logger writing JSON lines, or readable ones, to `sink`, from `level` up. */
function pinoOf(sink: LogSink, format: 'json' | 'pretty', level: HostLogLevel): Logger {
  const destination = format === 'json' ? sink : { write: (line: string) => sink.write(prettyLine(line)) };
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

/** The host's logger seam over a pino logger. */
function seamOf(logger: Logger): HostLogger {
  // Only defined fields: a journal's reader sees no `"processId":null`.
  const clean = (fields: LogFields): Record<string, unknown> => Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  return {
    debug: (fields, msg) => logger.debug(clean(fields), msg),
    info: (fields, msg) => logger.info(clean(fields), msg),
    warn: (fields, msg) => logger.warn(clean(fields), msg),
    error: (fields, msg) => logger.error(clean(fields), msg),
  };
}

/** What `exec-rx host` logs with: its log, its audit trail, and how to close the audit file. */
export interface HostLogs {
  readonly log: HostLogger;
  /** The audit trail: the log itself, unless `--audit-log` gave it a file. */
  readonly audit: HostLogger;
  /** Closes the audit file, if any (after the host closed). */
  close(): void;
}

/** Where the host's logs go, and how they look. */
export interface HostLogsOptions {
  readonly stderr: Writable & { readonly isTTY?: boolean };
  /** Absent: pretty on a terminal, JSON otherwise. */
  readonly format: 'json' | 'pretty' | undefined;
  readonly level: HostLogLevel;
  /** A file for the audit trail (created 0600, appended; an existing one is made 0600). */
  readonly auditFile: string | undefined;
}

/** Builds the host's logs; throws a ConfigError when the audit file cannot be opened. */
export function hostLogs(options: HostLogsOptions): HostLogs {
  const format = options.format ?? (options.stderr.isTTY === true ? 'pretty' : 'json');
  const log = seamOf(pinoOf({ write: (line) => void options.stderr.write(line) }, format, options.level));
  if (options.auditFile === undefined) return { log, audit: log, close: () => undefined };
  let fd: number;
  try {
    fd = openSync(options.auditFile, 'a', 0o600);
    fchmodSync(fd, 0o600);
  } catch (error: unknown) {
    throw new ConfigError(`cannot open --audit-log ${options.auditFile}`, { cause: error });
  }
  let open = true;
  // Each line is written at once (one write(2), O_APPEND): the trail survives a crash of the host.
  // The file keeps every act (info) even when stderr is quieter; a debug level adds the stdin writes.
  const auditLevel = options.level === 'trace' || options.level === 'debug' ? options.level : 'info';
  const audit = seamOf(pinoOf({ write: (line) => void (open ? writeSync(fd, line) : undefined) }, 'json', auditLevel));
  return {
    log,
    audit,
    close: () => {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}
