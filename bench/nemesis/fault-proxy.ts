/**
 * A TCP proxy of the nemesis's own (issue 38), put between two parts of a cluster to make a partition
 * between them without CAP_NET_ADMIN: between the balancer and a replica, or between a replica and Redis.
 * It passes bytes both ways until told otherwise:
 *
 * - {@link FaultProxy.cut}: every open connection is reset, both sides (what `ss -K` does).
 * - `refuse`: a new connection is accepted and destroyed at once (a dead port that stays taken).
 * - `blackhole`: every connection, open or new, passes nothing either way and is never closed; TCP's own
 *   windows fill up (a partition TCP has not noticed). Healing lets what waited through, in order.
 * - `hold`: a new connection is accepted and its first bytes kept, not sent on, for a while (or until
 *   {@link FaultProxy.release}); then they go on in order, with the client's end if it came meanwhile,
 *   and the connection passes from then on: a request that waited in a stopped process's accept queue
 *   after its client gave up on it.
 *
 * A connection another listener accepted can be handed to it ({@link FaultProxy.adopt}): one port in front
 * of Redis, whose connections go to each replica's own proxy by the process that made them
 * (`./redis-front`).
 *
 * Only loopback: it listens on 127.0.0.1 and dials 127.0.0.1. Its owner closes it.
 */
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import { listenOnLoopback } from '../lib/loopback';
import { ProxyCore } from './fault-pair';

/** What the proxy does with connections (see the module's doc). */
export type FaultMode = 'pass' | 'refuse' | 'blackhole' | 'hold';

/**
 * What a held connection's target gets of a client that went away while it was held: `forward`, its end
 * after the held bytes (what the kernel queues); `keep`, nothing: the connection stays open to the target
 * until the target closes it or {@link FaultProxy.cut} (a stale request whose other end never answers).
 */
export type HoldEnd = 'forward' | 'keep';

/** What the proxy counted (for the nemesis report and the specs' waits). */
export interface FaultProxyCounts {
  /** Connections accepted, in any mode. */
  readonly accepted: number;
  /** Connections open now (passing, blackholed or held). */
  readonly open: number;
  /** Connections whose first bytes are held now. */
  readonly held: number;
  /** Connections destroyed by {@link FaultProxy.cut}. */
  readonly cut: number;
  /** Connections refused. */
  readonly refused: number;
  /** Held connections let go on (their held bytes sent), by a timer or {@link FaultProxy.release}. */
  readonly released: number;
}

/** A running proxy (see the module's doc). */
export interface FaultProxy {
  /** Its port on 127.0.0.1. */
  readonly port: number;
  /** The port on 127.0.0.1 it forwards to. */
  readonly target: number;
  /** What it does with connections now. */
  readonly mode: FaultMode;
  /** What it counted so far. */
  readonly counts: FaultProxyCounts;
  /** New connections go to `port` from now on (a restarted replica's new port); open ones stay where they are. */
  retarget(port: number): void;
  /** Resets every open connection, both sides (held ones too); how many it reset. The mode stays. */
  cut(): number;
  /** New connections are accepted and destroyed at once. */
  refuse(): void;
  /** Every connection, open or new, passes nothing and stays open (see the module's doc). */
  blackhole(): void;
  /** New connections' bytes are held for `ms` (or until {@link release}), then go on (see the module's doc and {@link HoldEnd}). */
  hold(ms: number, end?: HoldEnd): void;
  /** Lets every held connection go on now. */
  release(): void;
  /** Back to passing: blackholed connections pass again (what waited first); held ones stay held until their time. */
  heal(): void;
  /** Takes a connection another listener accepted on 127.0.0.1, as if this proxy had accepted it (in its mode now). */
  adopt(client: Socket): void;
  /** Resolves once `predicate(counts)` holds; rejects after `timeoutMs`. */
  until(predicate: (counts: FaultProxyCounts) => boolean, timeoutMs: number, what: string): Promise<void>;
  /** Stops listening and destroys every connection; resolves once all are closed. Idempotent. */
  close(): Promise<void>;
}

/** Starts a proxy on a free loopback port in front of `target` (a port on 127.0.0.1), passing. */
export async function startFaultProxy(target: number): Promise<FaultProxy> {
  const core = new ProxyCore(target);
  const server = createServer((client) => core.accept(client));
  const port = await listenOnLoopback(server);
  let closing: Promise<void> | undefined;
  const setMode = (mode: FaultMode): void => {
    core.mode = mode;
    if (mode === 'blackhole') for (const pair of core.pairs) pair.stop();
  };
  return {
    port,
    get target() {
      return core.target;
    },
    get mode() {
      return core.mode;
    },
    get counts() {
      return core.counts;
    },
    retarget: (next) => void (core.target = next),
    cut: () => {
      const open = [...core.pairs];
      for (const pair of open) core.drop(pair, true);
      core.cutCount += open.length;
      core.changed();
      return open.length;
    },
    refuse: () => setMode('refuse'),
    blackhole: () => setMode('blackhole'),
    hold: (ms, end = 'forward') => {
      core.holdMs = ms;
      core.holdEnd = end;
      setMode('hold');
    },
    release: () => {
      for (const pair of [...core.pairs]) pair.release();
    },
    heal: () => {
      setMode('pass');
      for (const pair of core.pairs) pair.flow();
    },
    adopt: (client) => {
      if (closing !== undefined) client.destroy();
      else core.accept(client);
    },
    until: (predicate, timeoutMs, what) => core.until(predicate, timeoutMs, what),
    close: () => {
      closing ??= (async () => {
        core.mode = 'refuse';
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const pair of [...core.pairs]) core.drop(pair);
        await Promise.all(
          [...core.sockets].map((socket) =>
            socket.closed
              ? undefined
              : new Promise<void>((resolve) => {
                  socket.once('close', () => resolve());
                  socket.destroy();
                }),
          ),
        );
        await closed;
      })();
      return closing;
    },
  };
}
