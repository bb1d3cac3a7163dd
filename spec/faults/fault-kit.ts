/**
 * Shared pieces of the fault-injection specs: a seeded PRNG (mulberry32) whose seed the specs print in
 * their test names, the one deliberate real-time wait ({@link holdOutage}), and a direct-mode setup in
 * which the real executor dials the host through a disconnectable proxy (optionally also through a
 * frame relay that can tamper with and inject frames toward the host).
 *
 * Import it before anything else in a spec: it imports `../support/executor`, whose tracker stops every
 * executor, proxy and server in an `afterAll`.
 */
import type { Observable } from 'rxjs';
import { firstValueFrom, merge, Subject } from 'rxjs';
import { filter, ignoreElements, map, mergeMap } from 'rxjs/operators';
import type WebSocket from 'ws';
import type { ConnectionState, Environment } from '../../src';
import { EnvironmentManager } from '../../src';
import type { RpcConnection } from '../../src/rpc/rpc-connection';
import type { Acceptor } from '../support/acceptor';
import { startAcceptor } from '../support/acceptor';
import { startDirectExecutor, trackForCleanup } from '../support/executor';
import type { RegistryStub } from '../support/registry-stub';
import { startRegistryStub } from '../support/registry-stub';
import type { DisconnectableProxy } from '../support/ws-proxy';
import { startDisconnectableProxy } from '../support/ws-proxy';
import type { FrameRelay } from './frame-relay';
import { startFrameRelay } from './frame-relay';

/** The environment processes get: just a PATH. */
export const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

/**
 * The seed of every fault spec: `EXEC_RX_FAULT_SEED` (decimal or 0x-hex) to replay a failure, else a
 * fixed default. Specs put it in their test names so a failure report always carries it.
 */
export const FAULT_SEED: number = parseSeed(globalThis.process.env['EXEC_RX_FAULT_SEED']) ?? 0x5eed_c0de;

function parseSeed(text: string | undefined): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const value = Number(text.trim());
  if (!Number.isSafeInteger(value)) throw new Error(`EXEC_RX_FAULT_SEED must be an integer, got ${text}`);
  return value >>> 0;
}

/** mulberry32: a tiny, fast, seedable 32-bit PRNG; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** An integer in [min, max] drawn from `random`. */
export const randomInt = (random: () => number, min: number, max: number): number => min + Math.floor(random() * (max - min + 1));

/**
 * The only real-time wait in the fault specs: keeps the network down for `ms` on purpose (an outage
 * of a chosen length). Everything else waits for an event.
 */
export function holdOutage(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The host's accepted sockets as a stream, so a re-dial can be awaited together with the connection
 * state (the support acceptor's `nextAccepted` waiters cannot be cancelled).
 */
export class AcceptedInbox {
  private readonly queue: WebSocket[] = [];
  private readonly arrivals = new Subject<void>();
  private closed = false;

  constructor(private readonly acceptor: Acceptor) {}

  /** Takes the first socket (the executor's initial dial), then pumps every later one into the inbox. */
  async first(): Promise<WebSocket> {
    const socket = await this.acceptor.nextAccepted();
    void this.pump();
    return socket;
  }

  /** Each accepted socket once: the queued ones, then those arriving while subscribed. */
  readonly sockets$: Observable<WebSocket> = this.arrivals.pipe(
    mergeMap(() => this.queue.splice(0)),
  );

  /** Makes queued sockets (if any) flow to a subscriber that just subscribed. */
  flush(): void {
    if (this.queue.length > 0) this.arrivals.next();
  }

  close(): Promise<void> {
    this.closed = true;
    for (const socket of this.queue.splice(0)) socket.terminate();
    this.arrivals.complete();
    return Promise.resolve();
  }

  private async pump(): Promise<void> {
    while (!this.closed) {
      const socket = await this.acceptor.nextAccepted();
      if (this.closed) {
        socket.terminate();
        return;
      }
      this.queue.push(socket);
      this.arrivals.next();
    }
  }
}

/** A real direct-mode executor wired to a host: executor → proxy → [relay →] acceptor → manager. */
export interface FaultSetup {
  readonly acceptor: Acceptor;
  readonly proxy: DisconnectableProxy;
  readonly registry: RegistryStub;
  readonly relay: FrameRelay | undefined;
  readonly manager: EnvironmentManager;
  readonly environment: Environment;
  readonly inbox: AcceptedInbox;
}

/** Options of {@link faultSetup}. */
export interface FaultSetupOptions {
  /** Put a frame relay between the proxy and the acceptor (for injection and tampering). */
  readonly relay?: boolean;
}

/** Starts acceptor, proxy, registry stub (and relay) and a direct executor; adopts its first socket. */
export async function faultSetup(environmentId: string, options: FaultSetupOptions = {}): Promise<FaultSetup> {
  const acceptor = trackForCleanup(await startAcceptor());
  const inbox = trackForCleanup(new AcceptedInbox(acceptor));
  const relay = options.relay === true ? trackForCleanup(await startFrameRelay(acceptor.url)) : undefined;
  const proxy = trackForCleanup(await startDisconnectableProxy(relay?.url ?? acceptor.url));
  const registry = trackForCleanup(await startRegistryStub({ acceptorUrl: () => proxy.url }));
  await startDirectExecutor({ remoteUrl: registry.url, environmentId });
  const manager = await EnvironmentManager.fromAcceptedWebsocket(environmentId, await inbox.first(), { clientName: 'exec-rx-fault-spec' });
  trackForCleanup({ stop: () => manager.close({ terminateProcesses: true }) });
  const environment = manager.defaultEnvironment();
  if (environment === undefined) throw new Error('no default environment');
  return { acceptor, proxy, registry, relay, manager, environment, inbox };
}

/** Resolves with the first connection state of the given kind (the current one counts). */
export const stateIs = (environment: Environment, state: ConnectionState['state']): Promise<ConnectionState> =>
  firstValueFrom(environment.connectionState$.pipe(filter((s) => s.state === state)));

/** The RpcConnection of the current socket; throws unless connected. */
export function currentRpc(environment: Environment): RpcConnection {
  const state = environment.client.state;
  if (state.type !== 'connected') throw new Error(`environment ${environment.id} is ${state.type}, not connected`);
  return state.rpc;
}

/** Drops the executor's connection at the proxy and waits until the host sees it. */
export async function drop(setup: FaultSetup): Promise<void> {
  const disconnected = stateIs(setup.environment, 'disconnected');
  setup.proxy.pause();
  await disconnected;
}

/**
 * Lets the executor dial in again and adopts each socket it dials with `replaceAcceptedWebsocket`
 * until the environment is connected (an attempt refused with -32010 closes its socket; the executor
 * then dials again). Resolves with the number of sockets adopted.
 */
export async function redial(setup: FaultSetup): Promise<number> {
  const { environment, manager, inbox } = setup;
  let adopted = 0;
  const adopt$ = inbox.sockets$.pipe(
    mergeMap(async (socket) => {
      adopted += 1;
      await manager.replaceAcceptedWebsocket(environment.id, socket);
    }),
    ignoreElements(),
  );
  const connected$ = environment.connectionState$.pipe(
    filter((s) => s.state !== 'disconnected'),
    map((s) => {
      if (s.state === 'failed') throw s.error;
      return adopted;
    }),
  );
  const done = firstValueFrom(merge(adopt$, connected$));
  setup.proxy.resume();
  inbox.flush();
  return done;
}
