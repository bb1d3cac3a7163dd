/** `exec-rx run --env NAME=VALUE`: the pairs as an environment, checked without ever echoing a value. */
import { UsageError } from './usage-error';

/** The `--env` pairs as an object; throws a UsageError (never naming the argument: it may be a secret) for one without a name. */
export function parseEnvPairs(pairs: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    // The argument is never echoed: it may be a value (a secret) given without its name.
    if (eq < 0) throw new UsageError('--env expects NAME=VALUE, got an argument without "=" (not shown: it may be a value)');
    if (eq === 0) throw new UsageError('--env expects NAME=VALUE, got an argument starting with "=" (not shown: it may be a value)');
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}
