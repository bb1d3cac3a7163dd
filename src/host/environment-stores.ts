/** What a host's environments keep what they must in: its two stores, its sessions, and who it is as an owner. */
import type { LogStore } from '../store/log-store';
import type { StateStore } from '../store/state-store';

/** Where a host remembers its executors' sessions across restarts (its state store). */
export interface SessionRecords {
  /** The session of `environmentId`'s executor the host remembered when it started, if any. */
  rememberedAt(environmentId: string): string | undefined;
  /** Keeps the session an environment's executor now has, at `epoch`; resolves once kept (or could not be: reported there). Never rejects. */
  record(environmentId: string, sessionId: string, epoch: number): Promise<void>;
}

/** The stores a host's environments keep what they must in. */
export interface EnvironmentStores {
  /** Where processes keep their output. */
  readonly logs: LogStore;
  /** Where environments are claimed (owner, epoch) and take-back records kept. */
  readonly state: StateStore;
  /** The sessions the host remembers, and where a new one goes. */
  readonly sessions: SessionRecords;
  /** This host as an environment's owner: its instance id. */
  readonly owner: string;
  /**
   * The state is shared by replicas (Redis): an environment's session is read from it at each new
   * generation (any replica may have served it since), never only at the start. @default false
   */
  readonly shared?: boolean;
}
