/** Errors of the host's durable state: its data dir's lock, a write its store refused, a store that did not answer or answered unusably. */
import { ExecClientError } from './exec-client-error';
import { ConfigError } from './setup-errors';

/**
 * Another host holds the data dir's lock (`host.lock`): two hosts on one data dir would overwrite each
 * other's state. A lock left by a host that died is taken over, so this names a live process. A
 * configuration error (`CONFIG_INVALID`): stop that host or choose another data dir. The message
 * carries the pid, never the path (a data dir may hold a secret in its name).
 */
export class DataDirInUseError extends ConfigError {
  constructor(
    /** The pid of the host that holds the lock. */ readonly pid: number,
  ) {
    super(`the data dir is in use by host pid ${pid}: stop that host or choose another data dir`);
  }
}

/**
 * A write the host's store refused because its writer no longer owns the environment: another owner
 * claimed it since (a later epoch, see `StateStore.claim`). Nothing of the write was kept. The writer
 * is fenced: it must stop writing for that environment (a host drops its socket and state for it); on
 * one host every write carries the current epoch and this never happens. The message names the
 * environment and both epochs, never a secret.
 */
export class StaleEpochError extends ExecClientError {
  readonly code = 'STALE_EPOCH';
  constructor(
    /** The environment whose ownership moved on. */ readonly environmentId: string,
    /** The epoch the refused write carried. */ readonly epoch: number,
    /** The environment's epoch now. */ readonly currentEpoch: number,
  ) {
    super(`environment ${environmentId} is owned at epoch ${currentEpoch}: a write of epoch ${epoch} was refused`);
  }
}

/**
 * A claim the host's store refused because the socket it was for is older than the current owner's: the
 * executor signed that upgrade (`x-amz-date`) before the upgrade the current owner claimed the environment
 * on, so it is one the executor gave up on, handled late (it waited in a stopped replica's accept queue).
 * Nothing was kept; the claimer closes the socket (the executor has long moved on). The message names the
 * environment, both signing times and the epoch that stays, never a secret.
 */
export class StaleClaimError extends ExecClientError {
  readonly code = 'STALE_CLAIM';
  constructor(
    /** The environment whose claim was refused. */ readonly environmentId: string,
    /** When the refused claim's upgrade was signed (epoch ms). */ readonly signedAt: number,
    /** When the current owner's upgrade was signed (epoch ms). */ readonly ownerSignedAt: number,
    /** The environment's epoch, which stays. */ readonly currentEpoch: number,
  ) {
    super(
      `environment ${environmentId}: a claim for an upgrade signed at ${new Date(signedAt).toISOString()} was refused: ` +
        `the owner at epoch ${currentEpoch} claimed it on one signed at ${new Date(ownerSignedAt).toISOString()}`,
    );
  }
}

/**
 * The host's shared state store (Redis, with replicas) did not answer: its connection is down, a command
 * timed out, or it refused for a while (out of memory, loading). Nothing is known of whether a write was
 * kept; the caller retries (the operator API answers 503 with `Retry-After`). The message carries the
 * store's own words, never its url or password.
 */
export class StoreUnavailableError extends ExecClientError {
  readonly code = 'STORE_UNAVAILABLE';
  constructor(reason: string, options?: ErrorOptions) {
    super(`the shared state store did not answer: ${reason}`, options);
  }
}

/** Why a store script gave nothing usable: it is not defined on the connection, or its reply has the wrong shape. */
export type StoreScriptFailure = 'undefined' | 'reply';

/**
 * A script of the host's shared state store (Redis, with replicas) gave nothing the host can use: it is
 * not defined on the connection the call went to (`undefined`: a defect of the host), or Redis answered
 * it with a reply of the wrong shape (`reply`: a server that is not the Redis the scripts were written
 * for, or a proxy that changed the answer). Unlike STORE_UNAVAILABLE it does not pass: calling again
 * gets the same. An output log whose append this is fails (`LOG_WRITE_FAILED` with this code as its
 * errno). The message names the script and what came back, never the store's url or password.
 */
export class StoreScriptError extends ExecClientError {
  readonly code = 'STORE_SCRIPT_FAILED';
  constructor(
    /** The script's command name on the connection (`execRxLogAppend` ...). */ readonly script: string,
    /** Why (see {@link StoreScriptFailure}). */ readonly failure: StoreScriptFailure,
    detail: string,
  ) {
    super(failure === 'undefined' ? `the store script ${script} is not defined on its connection` : `the store script ${script} replied ${detail}`);
  }
}
