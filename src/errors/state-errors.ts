/** Errors of the host's durable state in its data dir. */
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
