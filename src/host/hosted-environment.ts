/**
 * What a host's embedder sees of the environments it serves: each environment's current generation
 * ({@link HostedEnvironment}, a new object on every change) and what happens to it ({@link HostEvent}).
 */
import type { ExecClientErrorCode } from '../errors';
import type { ConnectionState } from '../environment/connection-state';
import type { Environment } from '../environment/environment';
import type { Diagnostic } from '../rpc/diagnostics';
import type { EnvironmentInfo } from '../wire/environment';

/** `starting` until the first handshake finished; then the environment's connection state (see `ConnectionState`). */
export type HostedState = 'starting' | ConnectionState['state'];

/** One environment as the host sees it. A new object on every change. */
export interface HostedEnvironment {
  /** The environment id the executor registered under (`--environment-id`). */
  readonly id: string;
  /** 1 for the first executor session under this id; +1 each time a failed one is started afresh. */
  readonly generation: number;
  /** Where this generation is: starting, connected, disconnected (recovering) or failed. */
  readonly state: HostedState;
  /** The executor's environment info (what `Environment.info()` resolves with), once connected. */
  readonly info: EnvironmentInfo | undefined;
  /** The environment to start processes on; `undefined` while starting or when the start failed. */
  readonly environment: Environment | undefined;
  /** Why it is disconnected or failed (a library error message; never carries secrets). */
  readonly error: string | undefined;
  /** The library's code of that error (`RESUME_FAILED`, `TRANSPORT_CLOSED` ...). */
  readonly errorCode: ExecClientErrorCode | undefined;
}

/**
 * Something that happened to an environment the host serves, as it happened: its connection's
 * diagnostics (see `Environment.diagnostics$`), and each change of its state (a reconnect shows as
 * `disconnected` then `connected`, a lost session as `failed`). Carries no secret.
 */
export type HostEvent =
  | {
      /** The kind of event. */
      readonly type: 'diagnostic';
      /** The environment it happened on. */
      readonly environmentId: string;
      /** Its generation. */
      readonly generation: number;
      /** What went wrong on its connection (it stays up). */
      readonly diagnostic: Diagnostic;
    }
  | {
      /** The kind of event. */
      readonly type: 'state';
      /** The environment whose state changed. */
      readonly environmentId: string;
      /** Its generation. */
      readonly generation: number;
      /** Its new state. */
      readonly state: HostedState;
      /** The library's code of the error that made it so, for `disconnected` and `failed`. */
      readonly errorCode: ExecClientErrorCode | undefined;
    };
