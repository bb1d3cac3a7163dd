/**
 * After Redis lost its data, each replica that believes it owns an environment writes it back: its owner and
 * epoch first (refused when Redis holds a newer epoch), then the logs it writes. A replica another one had
 * taken the environment from, that had not learnt it yet (it was stopped, or cut off), can write it back
 * first, its processes `running` at its old epoch; the owner's write-back then takes the environment back
 * (its epoch is newer), but those processes are not in its executor's session: nobody would ever end them,
 * and their readers would wait for ever. The owner marks each one `lost`, saying why, once its own logs are
 * written back.
 */
import type { ProcessKey, ProcessMeta } from '../process-meta';
import { stillRunning } from '../process-meta';

/** What the owner's clean-up reads and writes (its log store's). */
export interface StaleWriteBackParts {
  /** The processes of an environment to be taken back: `running` under a writer older than its owner among them. */
  adoptable(environmentId: string): Promise<readonly ProcessMeta[]>;
  /** Whether this store writes the process's log (the owner's own processes). */
  writes(key: ProcessKey): boolean;
  /** Marks a process lost at `epoch` (refused once another owns the environment). */
  markLost(key: ProcessKey, reason: string, epoch: number): Promise<void>;
}

/**
 * Marks `lost` each process of an environment in `owned` (each with the epoch this replica owns it at) that
 * Redis lists as running under an older writer and this store does not write. Resolves with how many;
 * rejects with the store's error (the next renewal round writes everything back again).
 */
export async function loseStaleWriteBacks(parts: StaleWriteBackParts, owned: ReadonlyMap<string, number>): Promise<number> {
  let lost = 0;
  for (const [environmentId, epoch] of owned) {
    for (const meta of await parts.adoptable(environmentId)) {
      const key = { environmentId, processId: meta.processId };
      if (!stillRunning(meta) || parts.writes(key)) continue;
      const why = `after Redis lost its data, a replica that no longer owned environment ${environmentId} wrote it back as running`;
      await parts.markLost(key, `${why}; it is not in the session of the environment's owner (epoch ${epoch})`, epoch);
      lost++;
    }
  }
  return lost;
}
