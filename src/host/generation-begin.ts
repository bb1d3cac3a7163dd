/**
 * How a new generation of an environment begins on the executor's socket: it takes the executor's session
 * back (any the shared state records; with one host, the first since a restart that remembers it) or makes
 * a new one, and claims the environment only once the executor answered `initialize` on this socket. A
 * socket the executor gave up on (an upgrade a stopped replica handled late) never answers, so it never
 * takes the environment from the replica that serves the executor now; and its claim carries the time the
 * executor signed its upgrade, so a stale one is refused by the store as well (StaleClaimError).
 */
import type WebSocket from 'ws';
import { ClosedError } from '../errors';
import type { EnvironmentManagerOptions } from '../environment/environment-manager-options';
import { EnvironmentManager } from '../environment/environment-manager';
import type { HistoryFactory } from '../exec/output-history';
import { ClaimedHistories } from './claimed-histories';
import type { EnvironmentStores } from './environment-stores';
import type { EnvironmentSlot } from './environment-slot';
import { claimEnvironment } from './generation-records';
import type { HostLogger } from './host-logger';
import type { TakeBacks } from './take-back';
import type { TakeBackWait } from './take-back-wait';

const NO_SESSION = "the host had no record of its executor's session to take it back";

/** What a generation's beginning works with (its table's parts). */
export interface GenerationParts {
  readonly stores: EnvironmentStores;
  readonly managerOptions: EnvironmentManagerOptions;
  readonly log: HostLogger;
  readonly takeBacks: TakeBacks;
  readonly waits: TakeBackWait;
  /** Where a generation's processes keep their output, written at `epoch` (the store's factory, observed). */
  readonly outputHistory: (id: string, epoch: number) => HistoryFactory;
  /** Whether `slot` is still its environment's current one, and the table open. */
  readonly holds: (slot: EnvironmentSlot) => boolean;
}

/**
 * Begins `slot`'s generation of environment `id` on `socket` (see the module's doc). Resolves with its
 * manager; rejects with the handshake's, the claim's or the store's error (the caller fails the generation).
 */
export async function beginGeneration(parts: GenerationParts, id: string, socket: WebSocket, slot: EnvironmentSlot): Promise<EnvironmentManager> {
  const sessionId = await sessionToTakeBack(parts, id);
  const claim = (): Promise<number> => claimFor(parts, id, slot);
  if (sessionId === undefined) return fresh(parts, id, socket, claim);
  const manager = await parts.takeBacks.run(id, socket, sessionId, claim);
  parts.waits.settle(id);
  return manager;
}

/**
 * Claims `id` for `slot`'s generation, with the time the executor signed its upgrade, and keeps the epoch
 * on the slot. Rejects, claiming nothing, when the slot is no longer the environment's current one (let go
 * of, or the host closing).
 */
async function claimFor(parts: GenerationParts, id: string, slot: EnvironmentSlot): Promise<number> {
  if (!parts.holds(slot)) throw new ClosedError(`environment ${id}: its generation ${slot.view.generation} was let go of before its claim`);
  slot.epoch = await claimEnvironment(parts.stores.state, id, parts.stores.owner, parts.log, slot.signedAt);
  return slot.epoch;
}

/**
 * The session to take `id`'s executor back from: with a shared state, the one it records now (whichever
 * replica recorded it); else the one remembered at the start, for the first session since.
 */
async function sessionToTakeBack({ stores, waits }: GenerationParts, id: string): Promise<string | undefined> {
  if (stores.shared === true) return (await stores.state.environment(id))?.sessionId;
  return waits.installedSinceStart(id) ? undefined : stores.sessions.rememberedAt(id);
}

/**
 * A new session on the executor's socket, claimed once the executor answered `initialize` (`claim`). The
 * first one for `id` since this host started, when the host had no session of its executor to take back
 * (or always, with a shared state): the processes its logs hold for `id` are `lost` (the executor's old
 * session, if any, dies with them after its 80 s retention).
 */
async function fresh(parts: GenerationParts, id: string, socket: WebSocket, claim: () => Promise<number>): Promise<EnvironmentManager> {
  const histories = new ClaimedHistories(id, (epoch) => parts.outputHistory(id, epoch));
  const admit = async (): Promise<void> => histories.claim(await claim());
  const manager = await EnvironmentManager.fromAcceptedWebsocket(id, socket, { ...parts.managerOptions, outputHistory: histories.factory, admit });
  if (parts.stores.shared === true || !parts.waits.installedSinceStart(id)) {
    await parts.takeBacks.loseAll(id, histories.epoch, NO_SESSION);
    parts.waits.settle(id);
  }
  return manager;
}
