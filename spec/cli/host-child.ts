/**
 * The built `exec-rx host` as a child process on a spec's own data dir, the way the restart specs run it
 * (SIGKILL or SIGTERM it, start it again on the same data dir), and what those specs read back.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SseEvent } from '../host/api/sse-reader';
import { within } from '../host/api/sse-reader';
import type { CliRun } from './cli-process';
import { startCli } from './cli-process';

/** A running host child and the base url it printed. */
export interface HostChild {
  readonly run: CliRun;
  readonly base: string;
}

/** What a restart spec's host children share: credentials, a work dir (`XDG_STATE_HOME`) and its data dir. */
export interface HostChildren {
  /** The spec's work dir (made in `beforeAll`, removed in `afterAll`). */
  readonly work: () => string;
  /** `<work>/data`: the data dir every host of the spec uses. */
  readonly dataDir: () => string;
  /** The host's environment: the executor key and the operator token, `XDG_STATE_HOME` at the work dir. */
  readonly env: () => NodeJS.ProcessEnv;
  /** Starts a host (`--port 0 --data-dir <dataDir>` plus `args`) and resolves once it printed its url (20 s at most). */
  start(args?: readonly string[]): Promise<HostChild>;
}

/** The credentials the spec's hosts accept and its clients use. */
export interface HostCredentials {
  readonly keyId: string;
  readonly secret: string;
  readonly token: string;
}

/** The host children of a spec: call it inside a `describe` (it registers the work dir's `beforeAll`/`afterAll`). */
export function hostChildren(prefix: string, credentials: HostCredentials): HostChildren {
  let work: string | undefined;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), `exec-rx-${prefix}-`));
  });
  afterAll(() => {
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });
  const workDir = (): string => {
    if (work === undefined) throw new Error('the work dir exists only while the spec runs');
    return work;
  };
  const dataDir = (): string => join(workDir(), 'data');
  const env = (): NodeJS.ProcessEnv => ({ ...process.env, XDG_STATE_HOME: workDir(), EXEC_RX_ACCESS_KEY_ID: credentials.keyId, EXEC_RX_SECRET_ACCESS_KEY: credentials.secret, EXEC_RX_OPERATOR_TOKEN: credentials.token });
  return {
    work: workDir,
    dataDir,
    env,
    start: async (args = []) => {
      const run = startCli(['host', '--port', '0', '--data-dir', dataDir(), ...args], env());
      await within(run.waitFor('stdout', '--environment-id <environment-id>\n'), 20_000, 'host listening');
      const printed = run.stdout.map((c) => c.text).join('');
      const base = /^exec-rx host listening on (\S+)$/m.exec(printed)?.[1];
      if (base === undefined) throw new Error(`no url: ${printed}`);
      return { run, base };
    },
  };
}

/** Everything a host child wrote to stderr so far. */
export const stderrOf = (run: CliRun): string => run.stderr.map((c) => c.text).join('');

/** The output bytes (latin1) and seqs of `events`' output events, and the names of the other events, in order. */
export function outputOf(events: readonly SseEvent[]): { readonly text: string; readonly seqs: number[]; readonly others: string[] } {
  let text = '';
  const seqs: number[] = [];
  const others: string[] = [];
  for (const event of events) {
    if (event.event !== 'output') {
      others.push(event.event);
      continue;
    }
    const data = JSON.parse(event.data) as { seq: number; chunk: string };
    seqs.push(data.seq);
    text += Buffer.from(data.chunk, 'base64').toString('latin1');
  }
  return { text, seqs, others };
}

/** Resolves once `holds()` is true, checked at each change under `dataDir` (a watch, not a sleep); rejects naming `what` after `timeoutMs`. */
function untilOnDisk(dataDir: string, holds: () => boolean, what: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const watcher = watch(dataDir, { recursive: true }, () => {
      if (holds()) done();
    });
    const timer = setTimeout(() => done(new Error(`${what} within ${timeoutMs} ms`)), timeoutMs);
    function done(error?: Error): void {
      watcher.close();
      clearTimeout(timer);
      if (error === undefined) resolve();
      else reject(error);
    }
    if (holds()) done();
  });
}

const processDirOf = (dataDir: string, environmentId: string, processId: string): string => join(dataDir, 'processes', encodeURIComponent(environmentId), encodeURIComponent(processId));

/**
 * Resolves once the segment files of a process's output log hold `text` on disk (the host's write queue
 * has reached the file: what a crash then keeps). Rejects after `timeoutMs`.
 */
export function loggedOnDisk(dataDir: string, environmentId: string, processId: string, text: string, timeoutMs = 20_000): Promise<void> {
  const dir = processDirOf(dataDir, environmentId, processId);
  const holds = (): boolean =>
    existsSync(dir) &&
    readdirSync(dir)
      .filter((name) => name.endsWith('.seg'))
      .some((name) => readFileSync(join(dir, name)).includes(text));
  return untilOnDisk(dataDir, holds, `${text} was not on disk in ${dir}`, timeoutMs);
}

/**
 * Resolves once the metadata of a process's output log (meta.json) names its argv on disk: a host killed
 * before that write lists the process of before with what its directory tells (argv []). Rejects after
 * `timeoutMs`.
 */
export function describedOnDisk(dataDir: string, environmentId: string, processId: string, timeoutMs = 20_000): Promise<void> {
  const path = join(processDirOf(dataDir, environmentId, processId), 'meta.json');
  const holds = (): boolean => existsSync(path) && ((JSON.parse(readFileSync(path, 'utf8')) as { argv?: unknown[] }).argv?.length ?? 0) > 0;
  return untilOnDisk(dataDir, holds, `${path} did not name the argv`, timeoutMs);
}
