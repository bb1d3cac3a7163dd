/**
 * What a host keeps in its stores for each generation of an environment it serves: its claim of the
 * environment (owner and epoch, in the state store) as the generation begins, and each new process's
 * command line (in the log store), so a restarted host lists its processes of before.
 */
import type { Subscription } from 'rxjs';
import type { Environment } from '../environment/environment';
import type { LogStore } from '../store/log-store';
import type { StateStore } from '../store/state-store';
import type { HostLogger } from './host-logger';
import { messageOf, StaleClaimError } from '../errors';


/**
 * Environment `id`'s next epoch, `owner` its owner, for a socket whose upgrade the executor signed at
 * `signedAt`. A claim the store could not keep (a full disk) holds for this run when the store still names
 * `owner` the owner: the environment is served and the failure logged. Otherwise rejects with the store's
 * error (the generation fails; the executor re-dials), and always with StaleClaimError (a stale upgrade).
 */
export async function claimEnvironment(state: StateStore, id: string, owner: string, log: HostLogger, signedAt?: number): Promise<number> {
  try {
    return await state.claim(id, owner, signedAt === undefined ? {} : { signedAt });
  } catch (error: unknown) {
    if (error instanceof StaleClaimError) throw error;
    const current = await state.owner(id).catch(() => undefined);
    if (current?.owner !== owner) throw error;
    log.error({ environmentId: id }, `environment ${id}: its claim (epoch ${current.epoch}) could not be kept: ${messageOf(error)}`);
    return current.epoch;
  }
}

/** Records each new process of `environment` with its command line in `logs` as it is listed (what `ls` shows after a restart). */
export function describeProcesses(logs: LogStore, id: string, environment: Environment): Subscription {
  let described: ReadonlySet<string> = new Set<string>();
  return environment.processes$.subscribe((list) => {
    for (const summary of list) {
      if (!described.has(summary.processId)) void logs.describe({ environmentId: id, processId: summary.processId }, { argv: summary.argv, tty: summary.tty });
    }
    described = new Set(list.map((summary) => summary.processId));
  });
}
