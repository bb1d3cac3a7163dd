/**
 * What `exec-rx ls` prints: a table of environments with their processes indented under each, or one
 * JSON document of a stable shape (documented in the usage text) for scripts.
 */
import type { ApiErrorInfo, EnvironmentOverview } from '../../client/host-types';

/** One process in `ls --json`. */
export interface LsProcessJson {
  readonly id: string;
  readonly state: string;
  /** null until it exited. */
  readonly exitCode: number | null;
  readonly argv: readonly string[];
  readonly tty: boolean;
  readonly pipeStdin: boolean;
  readonly error: ApiErrorInfo | null;
}

/** One environment in `ls --json`. */
export interface LsEnvironmentJson {
  readonly id: string;
  readonly generation: number;
  readonly state: string;
  readonly error: ApiErrorInfo | null;
  readonly processes: readonly LsProcessJson[];
}

/** The document `ls --json` prints. */
export interface LsJson {
  /** The host's url as given. */
  readonly host: string;
  readonly environments: readonly LsEnvironmentJson[];
}

const errorInfo = (error: ApiErrorInfo | null): ApiErrorInfo | null => (error === null ? null : { code: error.code, message: error.message });

/** The `ls --json` document, with exactly the documented fields (in that order). */
export function lsJson(host: string, environments: readonly EnvironmentOverview[]): LsJson {
  return {
    host,
    environments: environments.map((e) => ({
      id: e.id,
      generation: e.generation,
      state: e.state,
      error: errorInfo(e.error),
      processes: e.processes.map((p) => ({ id: p.id, state: p.state, exitCode: p.exitCode, argv: [...p.argv], tty: p.tty, pipeStdin: p.pipeStdin, error: errorInfo(p.error) })),
    })),
  };
}

/** An argument as a shell would need it: bare when safe, else single-quoted (JSON-quoted when it holds control characters). */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  if (/[\u0000-\u001f\u007f]/.test(arg)) return JSON.stringify(arg);
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Rows as text columns (two spaces apart, the last column unpadded), each line prefixed with `indent`. */
function columns(rows: readonly (readonly string[])[], indent: string): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => `${indent}${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')}`.trimEnd());
}

/**
 * The table: `ENVIRONMENT GEN STATE PROCESSES`, and under each environment with processes, indented,
 * `ID STATE EXIT ARGV` (EXIT is `-` until it exited). Ends with a newline.
 */
export function lsTable(environments: readonly EnvironmentOverview[]): string {
  const envRows = environments.map((e) => [e.id, String(e.generation), e.state, String(e.processes.length)]);
  const envLines = columns([['ENVIRONMENT', 'GEN', 'STATE', 'PROCESSES'], ...envRows], '');
  const lines: string[] = [envLines[0] ?? ''];
  environments.forEach((e, i) => {
    lines.push(envLines[i + 1] ?? '');
    if (e.processes.length === 0) return;
    const rows = e.processes.map((p) => [p.id, p.state, p.exitCode === null ? '-' : String(p.exitCode), p.argv.map(shellQuote).join(' ')]);
    lines.push(...columns([['ID', 'STATE', 'EXIT', 'ARGV'], ...rows], '  '));
  });
  return `${lines.join('\n')}\n`;
}
