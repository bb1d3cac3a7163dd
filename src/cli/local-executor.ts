/**
 * `exec-rx host --local-executor` with a data dir: the local executor is an executor of its own, so a
 * host restart costs it nothing. What the data dir keeps of it, in `local-executor/` (mode 0700):
 * `credentials.json` (its SigV4 access key id and secret: mode 0600, replaced whole, never logged),
 * `executor.json` (its pid and environment id), `executor.log` (its stdout and stderr) and `codex-home/`
 * (its CODEX_HOME). The executor is spawned detached (`../executor/detached-executor`): a host that dies
 * or stops leaves it running, and the next host on the data dir waits for it to re-dial (409, it
 * registers again, its session is taken back) instead of starting a second one.
 * `exec-rx host --stop-local-executor` ends it on purpose.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DetachedEnd } from '../executor/detached-executor';
import { endDetachedExecutor, isDetachedExecutor, spawnDetachedExecutor } from '../executor/detached-executor';
import { resolveCodexBinary } from '../executor/codex-binary';

/** The local executor's SigV4 key. */
export interface LocalCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** The folder of the local executor's files in a data dir. */
export const LOCAL_EXECUTOR_DIR = 'local-executor';

/** How long `--stop-local-executor` waits after SIGTERM, then after SIGKILL. */
const STOP_GRACE_MS = 5_000;

/** Throwaway SigV4 credentials for the local executor. */
export const makeCredentials = (): LocalCredentials => ({
  accessKeyId: `EXECRXLOCAL${randomBytes(8).toString('hex').toUpperCase()}`,
  secretAccessKey: randomBytes(32).toString('base64url'),
});

/** The local executor's files in one data dir. */
export class LocalExecutorFiles {
  readonly dir: string;
  readonly codexHome: string;
  readonly logPath: string;
  private readonly credentialsPath: string;
  private readonly recordPath: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, LOCAL_EXECUTOR_DIR);
    this.codexHome = join(this.dir, 'codex-home');
    this.logPath = join(this.dir, 'executor.log');
    this.credentialsPath = join(this.dir, 'credentials.json');
    this.recordPath = join(this.dir, 'executor.json');
  }

  /** The kept key, or a new one written (0600, atomically) when there is none or it is damaged. */
  async credentials(): Promise<LocalCredentials> {
    await mkdir(this.codexHome, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    const kept = await readObject(this.credentialsPath);
    const { accessKeyId, secretAccessKey } = kept ?? {};
    if (typeof accessKeyId === 'string' && accessKeyId !== '' && typeof secretAccessKey === 'string' && secretAccessKey !== '') return { accessKeyId, secretAccessKey };
    const made = makeCredentials();
    await writePrivately(this.credentialsPath, { version: 1, ...made });
    return made;
  }

  /** The recorded executor's pid, if any. */
  async recordedPid(): Promise<number | undefined> {
    const pid = (await readObject(this.recordPath))?.['pid'];
    return typeof pid === 'number' && Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  }

  /** Records the executor's pid. */
  record(pid: number, environmentId: string): Promise<void> {
    return writePrivately(this.recordPath, { version: 1, pid, environmentId });
  }

  /** Forgets the executor (its key stays, for the next one). */
  forget(): Promise<void> {
    return rm(this.recordPath, { force: true });
  }

  /** Whether `pid` is this data dir's live executor. */
  alive(pid: number): boolean {
    return isDetachedExecutor(pid, this.codexHome);
  }
}

/** What the host was told to run the local executor with. */
export interface LocalExecutorStart {
  readonly files: LocalExecutorFiles;
  readonly remoteUrl: string;
  readonly environmentId: string;
  readonly credentials: LocalCredentials;
  readonly log: (line: string) => void;
}

/**
 * Makes sure the data dir's local executor runs: the recorded one when it is still alive (it re-dials
 * this host by itself), else a new one, detached, with the same key (its pid recorded). Rejects when the
 * binary is missing or cannot be spawned. Its exit, while this host runs, is logged.
 */
export async function ensureLocalExecutor(start: LocalExecutorStart): Promise<void> {
  const { files, log } = start;
  const recorded = await files.recordedPid();
  if (recorded !== undefined && files.alive(recorded)) {
    log(`local executor pid ${recorded} still running: waiting for it to re-dial`);
    return;
  }
  const binary = resolveCodexBinary(); // throws the "how to get an executor" message when @openai/codex is missing
  if (recorded !== undefined) log(`local executor pid ${recorded} is gone: starting a new one`);
  const executor = await spawnDetachedExecutor(
    { mode: 'direct', binary, remoteUrl: start.remoteUrl, environmentId: start.environmentId, credentials: start.credentials },
    { codexHome: files.codexHome, logPath: files.logPath },
  );
  await files.record(executor.pid, start.environmentId);
  log(`local executor started (pid ${executor.pid}, environment ${start.environmentId})`);
  log(`local executor pid ${executor.pid} runs detached: it outlives this host (exec-rx host --stop-local-executor ends it); its output goes to ${files.logPath}`);
  void executor.exited.then(({ code, signal }) => log(`local executor pid ${executor.pid} exited (${signal === null ? `status ${String(code)}` : `signal ${signal}`})`));
}

const END_WORDS: Readonly<Record<DetachedEnd, string>> = {
  terminated: 'ended (SIGTERM; its processes ended with it)',
  killed: 'killed (SIGKILL after the grace: its processes may be left running)',
  'not running': 'was not running',
  'still running': 'could not be ended',
};

/**
 * `exec-rx host --stop-local-executor`: ends the data dir's local executor (SIGTERM, SIGKILL after a
 * grace) and removes its record. Says what it did on `out`; resolves 0 when it ended one, 1 when there
 * was none or it could not.
 */
export async function stopLocalExecutor(dataDir: string, out: (line: string) => void): Promise<number> {
  const files = new LocalExecutorFiles(dataDir);
  const pid = await files.recordedPid();
  if (pid === undefined) {
    out(`no local executor recorded in ${dataDir}`);
    return 1;
  }
  const end = await endDetachedExecutor(pid, () => files.alive(pid), STOP_GRACE_MS);
  if (end !== 'still running') await files.forget();
  out(`local executor pid ${pid} ${END_WORDS[end]}${end === 'still running' ? '' : '; its record is removed'}`);
  return end === 'terminated' || end === 'killed' ? 0 : 1;
}

/** A file's JSON object, or undefined when it is missing or damaged. */
async function readObject(path: string): Promise<Readonly<Record<string, unknown>> | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? { ...parsed } : undefined;
  } catch {
    return undefined;
  }
}

/** Replaces `path` with `value` as JSON, readable only by the user: a 0600 temp file, synced, renamed over it. */
async function writePrivately(path: string, value: object): Promise<void> {
  const temp = `${path}.tmp`;
  await rm(temp, { force: true }); // a crash's leftover may have other modes
  const file = await open(temp, 'wx', 0o600);
  try {
    await file.writeFile(`${JSON.stringify(value)}\n`, 'utf8');
    await file.datasync();
  } finally {
    await file.close();
  }
  await rename(temp, path);
}
