/** `exec-rx host`'s log flags, checked: `--log-format` and `--log-level`. */
import { UsageError } from './usage-error';

/** The levels of `--log-level`, least severe first. */
export const HOST_LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

/** One of {@link HOST_LOG_LEVELS}. */
export type HostLogLevel = (typeof HOST_LOG_LEVELS)[number];

const isLogLevel = (value: string): value is HostLogLevel => HOST_LOG_LEVELS.some((level) => level === value);

/** The format `--log-format` names (undefined without it: JSON unless stderr is a terminal). Throws a UsageError for another. */
export function logFormatOf(value: string | undefined): 'json' | 'pretty' | undefined {
  if (value === undefined || value === 'json' || value === 'pretty') return value;
  throw new UsageError('--log-format expects json or pretty');
}

/** The level `--log-level` names (`info` without it). Throws a UsageError for another. */
export function logLevelOf(value: string | undefined): HostLogLevel {
  if (value === undefined) return 'info';
  if (isLogLevel(value)) return value;
  throw new UsageError(`--log-level expects one of ${HOST_LOG_LEVELS.join(', ')}`);
}
