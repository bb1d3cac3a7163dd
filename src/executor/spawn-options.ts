import type { SchedulerLike } from 'rxjs';

/** Options shared by every mode. */
export interface SpawnCommonOptions {
  /** Arguments appended after the mode's own `exec-server` arguments. @default [] */
  readonly extraArgs?: readonly string[];
  /** Extra environment variables for the executor (applied over the sanitised inherited environment). */
  readonly env?: Readonly<Record<string, string>>;
  /** Path of the native binary. @default resolveCodexBinary() */
  readonly binary?: string;
  /** How long to wait for the executor to start (listen mode: for its URL line). @default 15000 */
  readonly startTimeoutMs?: number;
  /** How many recent stderr lines `SpawnedExecutor.stderrLines()` keeps. @default 200 */
  readonly stderrLineLimit?: number;
  /** Drives the start timeout and the stop's SIGKILL and pipe-close graces; specs pass a virtual-time scheduler. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
}

/** `codex exec-server --listen ws://127.0.0.1:0`: a WebSocket server on a free loopback port. */
export interface ListenSpawnOptions extends SpawnCommonOptions {
  readonly mode: 'listen';
  /** Require `Authorization: Bearer <token>` on upgrades (`--ws-auth capability-token`). Written to a 0600 file. */
  readonly wsAuthToken?: string;
}

/** `codex exec-server --listen stdio`: newline-delimited JSON-RPC on the child's stdin/stdout. */
export interface StdioSpawnOptions extends SpawnCommonOptions {
  readonly mode: 'stdio';
}

/** Static AWS credentials for SigV4 signing, passed to the executor as `AWS_*` variables. */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** `codex exec-server --remote URL --remote-transport direct --aws-sigv4`: registers, then dials the host. */
export interface DirectSpawnOptions extends SpawnCommonOptions {
  readonly mode: 'direct';
  /** Base URL of the environment registry (`http` only on loopback). */
  readonly remoteUrl: string;
  readonly environmentId: string;
  readonly credentials: AwsCredentials;
  /** SigV4 signing region. @default 'us-east-1' */
  readonly region?: string;
  /**
   * Whether the executor exits (with its processes) when its stdin closes, i.e. when this process dies
   * (`--exit-on-stdin-close`, stdin a pipe). False for an executor of its own (`./detached-executor`):
   * its stdin is /dev/null. @default true
   */
  readonly exitOnStdinClose?: boolean;
}
/** What `spawnExecutor` (`./spawn-executor`) can start. */
export type SpawnExecutorOptions = ListenSpawnOptions | StdioSpawnOptions | DirectSpawnOptions;
