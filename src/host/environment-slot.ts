/**
 * One environment id's current generation as the host's table holds it: what the host shows of it (a new
 * view on every change, each change of state logged and emitted), its manager once its first handshake
 * finished, the executor's latest socket, and the epoch it claimed the environment at.
 */
import type { Subscription } from 'rxjs';
import type WebSocket from 'ws';
import type { ConnectionState } from '../environment/connection-state';
import type { Environment } from '../environment/environment';
import type { EnvironmentManager } from '../environment/environment-manager';
import type { HostedEnvironment, HostEvent } from './hosted-environment';
import type { HostLogger } from './host-logger';

/** What a slot tells the table it belongs to. */
export interface SlotTable {
  /** Whether `slot` is still its id's current one, and the table open. */
  holds(slot: EnvironmentSlot): boolean;
  /** Where changes of state are logged. */
  readonly log: HostLogger;
  /** Emits an event of the table's `events$`. */
  emit(event: HostEvent): void;
  /** The table's list changed. */
  publish(): void;
  /** The slot's executor connected with `sessionId` (the table records it). */
  connected(slot: EnvironmentSlot, sessionId: string): void;
}

const OPEN = 1;

/** One generation of an environment (see the module's doc). */
export class EnvironmentSlot {
  /** What the host shows of it. */
  view: HostedEnvironment;
  /** Its manager, once its first handshake finished. */
  manager: EnvironmentManager | undefined;
  /**
   * The executor's latest socket. Once handed over, its manager owns it (its port closes it); the host
   * keeps the raw socket for two things the manager cannot do: `dropSocket` cuts it as a network failure
   * would (a remote close the manager recovers from, where the port's own close is a local one), and a
   * socket whose first handshake still runs has no manager yet to close it when the host closes.
   */
  socket: WebSocket | undefined;
  /** The epoch this generation claimed the environment at (every write for it carries it); 0 until claimed. */
  epoch = 0;
  /** When the executor signed the upgrade of the socket it holds (epoch ms), when known: an older upgrade is a stale one. */
  signedAt: number | undefined;
  private watching: Subscription | undefined;

  constructor(
    id: string,
    generation: number,
    socket: WebSocket,
    private readonly table: SlotTable,
  ) {
    this.view = { id, generation, state: 'starting', info: undefined, environment: undefined, error: undefined, errorCode: undefined };
    this.socket = socket;
  }

  /** Takes the generation's manager: watches its environment's state and diagnostics, and `also` until released. */
  watch(manager: EnvironmentManager, environment: Environment, also: Subscription): void {
    this.manager = manager;
    this.update({ environment });
    const { id, generation } = this.view;
    this.watching = environment.connectionState$.subscribe((state) => this.onState(environment, state));
    this.watching.add(environment.diagnostics$.subscribe((diagnostic) => this.table.emit({ type: 'diagnostic', environmentId: id, generation, diagnostic })));
    this.watching.add(also);
  }

  /** Changes what the host shows of it; a change of state is logged and emitted. Nothing once the table let go of it. */
  update(change: Partial<HostedEnvironment>): void {
    if (!this.table.holds(this)) return;
    const before = this.view;
    this.view = { ...before, ...change };
    if (this.view.state !== before.state) {
      const { id, generation, state, errorCode } = this.view;
      const error = this.view.error === undefined ? '' : `: ${this.view.error}`;
      const fields = { environmentId: id, generation, state, ...(errorCode === undefined ? {} : { code: errorCode }) };
      if (state === 'failed') this.table.log.warn(fields, `environment ${id} generation ${generation}: ${state}${error}`);
      else this.table.log.info(fields, `environment ${id} generation ${generation}: ${state}${error}`);
      this.table.emit({ type: 'state', environmentId: id, generation, state, errorCode });
    }
    this.table.publish();
  }

  /** Stops watching and closes its manager (processes stay with the executor); a failed one's socket is closed too. Never rejects. */
  async release(): Promise<void> {
    this.watching?.unsubscribe();
    this.watching = undefined;
    const manager = this.manager;
    this.manager = undefined;
    if (this.socket !== undefined && this.socket.readyState === OPEN && this.view.state === 'failed') this.socket.terminate();
    await manager?.close().catch(() => undefined);
  }

  /** Terminates the executor's socket if it is open (it re-dials); whether it was. */
  dropSocket(): boolean {
    if (this.socket === undefined || this.socket.readyState !== OPEN) return false;
    this.socket.terminate();
    return true;
  }

  private onState(environment: Environment, state: ConnectionState): void {
    if (state.state === 'connected') {
      this.update({ state: 'connected', error: undefined, errorCode: undefined });
      const sessionId = environment.client.sessionId;
      if (sessionId !== undefined) this.table.connected(this, sessionId);
      if (this.view.info === undefined) {
        environment.info().then(
          (info) => this.update({ info }),
          () => undefined,
        );
      }
      return;
    }
    const error = 'error' in state ? { error: state.error.message, errorCode: state.error.code } : { error: undefined, errorCode: undefined };
    this.update({ state: state.state, ...error });
    if (state.state === 'failed') {
      // The executor must re-dial to start the next generation: close whatever socket it still holds.
      this.socket?.terminate();
      void this.release();
    }
  }
}
