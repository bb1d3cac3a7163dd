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
 * Only loopback: it listens on 127.0.0.1 and dials 127.0.0.1. Its owner closes it.
 */
import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

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
  /** Resolves once `predicate(counts)` holds; rejects after `timeoutMs`. */
  until(predicate: (counts: FaultProxyCounts) => boolean, timeoutMs: number, what: string): Promise<void>;
  /** Stops listening and destroys every connection; resolves once all are closed. Idempotent. */
  close(): Promise<void>;
}

/** One connection through the proxy: the client's socket and, once dialled, the target's. */
class Pair {
  upstream: Socket | undefined;
  private flowing = false;
  private heldUntil: NodeJS.Timeout | undefined;
  private holdEnd: HoldEnd = 'forward';
  private readonly kept: Buffer[] = [];
  /** The client ended or closed while held. */
  private clientGone = false;
  /** Released after its client went: it lives as long as the target's side does. */
  private orphan = false;

  constructor(
    readonly client: Socket,
    private readonly proxy: ProxyCore,
  ) {}

  /** Holds the client's bytes for `ms`, then goes on (see {@link release} and {@link HoldEnd}). */
  hold(ms: number, end: HoldEnd): void {
    this.holdEnd = end;
    this.client.on('data', this.keep);
    this.client.once('end', () => void (this.clientGone = true));
    this.heldUntil = setTimeout(() => this.release(), ms);
  }

  /** Whether its first bytes are held now. */
  get held(): boolean {
    return this.heldUntil !== undefined;
  }

  /** The client's socket closed: whether the pair goes with it (a held or orphaned one stays for its target's side). */
  clientClosed(): boolean {
    if (this.held) this.clientGone = true;
    return !this.held && !this.orphan;
  }

  /**
   * Ends the hold: dials the target and sends what was kept; then passes on, or, when the client went
   * meanwhile, forwards its end (or not: {@link HoldEnd}) and drains the target's answer until it closes.
   */
  release(): void {
    if (this.heldUntil === undefined) return;
    clearTimeout(this.heldUntil);
    this.heldUntil = undefined;
    this.client.off('data', this.keep);
    this.proxy.released += 1;
    const upstream = this.dial();
    for (const chunk of this.kept.splice(0)) upstream.write(chunk);
    if (this.clientGone || this.client.destroyed) {
      this.orphan = true;
      upstream.resume();
      if (this.holdEnd === 'forward') upstream.end();
    } else {
      this.route();
    }
    this.proxy.changed();
  }

  /** Dials the target and passes bytes both ways (nothing while the proxy blackholes). */
  open(): void {
    this.dial();
    this.route();
  }

  /** Passes bytes both ways, or nothing while the proxy blackholes. */
  route(): void {
    if (this.proxy.mode === 'blackhole') this.stop();
    else this.flow();
  }

  /** Passes bytes both ways. */
  flow(): void {
    const upstream = this.upstream;
    if (this.flowing || this.held || upstream === undefined || this.client.destroyed) return;
    this.flowing = true;
    this.client.pipe(upstream);
    upstream.pipe(this.client);
  }

  /** Passes nothing either way (the sockets stay open; TCP's windows fill up). */
  stop(): void {
    if (this.held) return;
    this.flowing = false;
    this.client.unpipe();
    this.client.pause();
    this.upstream?.unpipe();
    this.upstream?.pause();
  }

  /** Closes both sides; `reset`: with a TCP reset, as a cut does (a plain close sends a FIN, which a half-open peer may sit on). */
  destroy(reset = false): void {
    if (this.heldUntil !== undefined) clearTimeout(this.heldUntil);
    this.heldUntil = undefined;
    for (const socket of [this.client, this.upstream]) {
      if (socket === undefined || socket.destroyed) continue;
      if (reset && socket.readyState === 'open') socket.resetAndDestroy();
      else socket.destroy();
    }
  }

  private dial(): Socket {
    const upstream = connect(this.proxy.target, '127.0.0.1');
    this.upstream = upstream;
    this.proxy.track(upstream);
    upstream.once('close', () => this.proxy.drop(this));
    return upstream;
  }

  private readonly keep = (chunk: Buffer): void => void this.kept.push(chunk);
}

/** The proxy's state, shared with its pairs. */
class ProxyCore {
  mode: FaultMode = 'pass';
  holdMs = 0;
  holdEnd: HoldEnd = 'forward';
  accepted = 0;
  cutCount = 0;
  refused = 0;
  released = 0;
  readonly pairs = new Set<Pair>();
  readonly sockets = new Set<Socket>();
  private readonly waiters = new Set<() => void>();

  constructor(public target: number) {}

  get counts(): FaultProxyCounts {
    const held = [...this.pairs].filter((pair) => pair.held).length;
    return { accepted: this.accepted, open: this.pairs.size, held, cut: this.cutCount, refused: this.refused, released: this.released };
  }

  track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => this.sockets.delete(socket));
  }

  drop(pair: Pair, reset = false): void {
    if (!this.pairs.delete(pair)) return;
    pair.destroy(reset);
    this.changed();
  }

  accept(client: Socket): void {
    this.track(client);
    this.accepted += 1;
    if (this.mode === 'refuse') {
      this.refused += 1;
      client.destroy();
      this.changed();
      return;
    }
    const pair = new Pair(client, this);
    this.pairs.add(pair);
    client.once('close', () => (pair.clientClosed() ? this.drop(pair) : undefined));
    if (this.mode === 'hold') pair.hold(this.holdMs, this.holdEnd);
    else pair.open();
    this.changed();
  }

  changed(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  until(predicate: (counts: FaultProxyCounts) => boolean, timeoutMs: number, what: string): Promise<void> {
    if (predicate(this.counts)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!predicate(this.counts)) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`fault proxy on ${this.target}: ${what} did not happen in ${timeoutMs} ms (${JSON.stringify(this.counts)})`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }
}

/** Starts a proxy on a free loopback port in front of `target` (a port on 127.0.0.1), passing. */
export async function startFaultProxy(target: number): Promise<FaultProxy> {
  const core = new ProxyCore(target);
  const server = createServer((client) => core.accept(client));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
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
