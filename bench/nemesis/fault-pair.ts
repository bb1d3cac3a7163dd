/**
 * The insides of the nemesis's fault proxy (`./fault-proxy`): one connection through it (a {@link Pair})
 * and the state its connections share (a {@link ProxyCore}).
 */
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import type { FaultMode, FaultProxyCounts, HoldEnd } from './fault-proxy';

/** One connection through the proxy: the client's socket and, once dialled, the target's. */
export class Pair {
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
export class ProxyCore {
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

