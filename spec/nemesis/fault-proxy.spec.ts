/**
 * The nemesis's TCP proxy (bench/nemesis/fault-proxy.ts) on real loopback sockets: it passes, cuts,
 * refuses, blackholes and heals, holds a connection's first bytes (forwarding the client's end after them,
 * or keeping the connection open), takes connections another listener accepted, and moves to a new target.
 */
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import type { FaultProxy } from '../../bench/nemesis/fault-proxy';
import { startFaultProxy } from '../../bench/nemesis/fault-proxy';
import { listenOnLoopback } from '../support/listen-on-loopback';

/** One connection as the target saw it. */
interface Seen {
  readonly socket: Socket;
  text: string;
  ended: boolean;
  closed: boolean;
}

/** A target that records each connection and answers `pong:` + what it got. */
class Target {
  readonly seen: Seen[] = [];
  private readonly waiters = new Set<() => void>();
  private constructor(
    readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<Target> {
    const made: { target?: Target } = {};
    const server = createServer({ allowHalfOpen: true }, (socket) => made.target?.accept(socket));
    const target = new Target(server, await listenOnLoopback(server, 'target'));
    made.target = target;
    return target;
  }

  until(predicate: () => boolean): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = (): void => {
        if (!predicate()) return;
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  async close(): Promise<void> {
    for (const { socket } of this.seen) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    const seen: Seen = { socket, text: '', ended: false, closed: false };
    this.seen.push(seen);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      seen.text += chunk;
      if (!socket.writableEnded) socket.write(`pong:${chunk}`);
      this.wake();
    });
    socket.on('error', () => undefined);
    socket.once('end', () => {
      seen.ended = true;
      this.wake();
    });
    socket.once('close', () => {
      seen.closed = true;
      this.wake();
    });
    this.wake();
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/** A client of the proxy, with what it read and whether it closed. */
interface Client {
  readonly socket: Socket;
  text(): string;
  until(predicate: (text: string) => boolean): Promise<void>;
  closed(): Promise<void>;
}

async function dial(port: number): Promise<Client> {
  const socket = connect(port, '127.0.0.1');
  socket.setEncoding('utf8');
  socket.on('error', () => undefined);
  let text = '';
  const waiters = new Set<() => void>();
  socket.on('data', (chunk: string) => {
    text += chunk;
    for (const waiter of [...waiters]) waiter();
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return {
    socket,
    text: () => text,
    until: (predicate) =>
      predicate(text)
        ? Promise.resolve()
        : new Promise((resolve) => {
            const check = (): void => {
              if (!predicate(text)) return;
              waiters.delete(check);
              resolve();
            };
            waiters.add(check);
          }),
    closed: () => closed,
  };
}

describe('the fault proxy', () => {
  let target: Target;
  let proxy: FaultProxy;
  const others: { close(): Promise<void> }[] = [];
  const clients: Socket[] = [];

  beforeEach(async () => {
    target = await Target.start();
    proxy = await startFaultProxy(target.port);
  });
  afterEach(async () => {
    for (const socket of clients.splice(0)) socket.destroy();
    await proxy.close();
    for (const other of others.splice(0)) await other.close();
    await target.close();
  });
  const client = async (port = proxy.port): Promise<Client> => {
    const made = await dial(port);
    clients.push(made.socket);
    return made;
  };

  it('passes bytes both ways', async () => {
    const c = await client();
    c.socket.write('ping');
    await c.until((text) => text === 'pong:ping');
    expect(target.seen.map((seen) => seen.text)).toEqual(['ping']);
    expect(proxy.counts).toMatchObject({ accepted: 1, open: 1, held: 0 });
  });

  it('cuts every open connection, both sides, and lets the next through', async () => {
    const c = await client();
    c.socket.write('a');
    await c.until((text) => text === 'pong:a');
    expect(proxy.cut()).toBe(1);
    await c.closed();
    await target.until(() => target.seen[0]?.closed === true);
    const next = await client();
    next.socket.write('b');
    await next.until((text) => text === 'pong:b');
    expect(proxy.counts).toMatchObject({ accepted: 2, cut: 1, open: 1 });
  });

  it('refuses new connections without dialling the target', async () => {
    proxy.refuse();
    const c = await client();
    await c.closed();
    expect(target.seen).toHaveLength(0);
    expect(proxy.counts).toMatchObject({ accepted: 1, refused: 1, open: 0 });
  });

  it('blackholes open and new connections, and lets what waited through in order when healed', async () => {
    const control = await startFaultProxy(target.port);
    others.push(control);
    const c = await client();
    c.socket.write('1');
    await target.until(() => target.seen[0]?.text === '1');
    proxy.blackhole();
    c.socket.write('2');
    const later = await client();
    later.socket.write('late');
    // A connection through a passing proxy on the same event loop, written after: it arrives, the others do not.
    const check = await client(control.port);
    check.socket.write('control');
    await target.until(() => target.seen.some((seen) => seen.text === 'control'));
    expect(target.seen[0]?.text).toBe('1');
    expect(target.seen.some((seen) => seen.text === 'late')).toBe(false);
    proxy.heal();
    await target.until(() => target.seen.some((seen) => seen.text === '12') && target.seen.some((seen) => seen.text === 'late'));
    await c.until((text) => text === 'pong:1pong:2');
    await later.until((text) => text === 'pong:late');
  });

  it("holds a new connection's first bytes, then sends them and the client's end that came meanwhile", async () => {
    proxy.hold(60_000);
    const c = await client();
    c.socket.end('GET /stale HTTP/1.1\r\n\r\n');
    await proxy.until((counts) => counts.held === 1, 5_000, 'the connection held');
    await c.closed();
    expect(target.seen).toHaveLength(0);
    expect(proxy.counts).toMatchObject({ held: 1, open: 1 });
    proxy.release();
    await target.until(() => target.seen[0]?.ended === true);
    expect(target.seen[0]?.text).toBe('GET /stale HTTP/1.1\r\n\r\n');
    expect(proxy.counts).toMatchObject({ held: 0, released: 1 });
  });

  it('keeps a released connection open to the target when told to, until the target closes it', async () => {
    proxy.hold(60_000, 'keep');
    const c = await client();
    c.socket.end('stale');
    await proxy.until((counts) => counts.held === 1, 5_000, 'the connection held');
    await c.closed();
    proxy.release();
    await target.until(() => target.seen[0]?.text === 'stale');
    // A round trip on another connection, made after: had the end been sent with the bytes, it came by now.
    proxy.heal();
    const control = await client();
    control.socket.write('x');
    await control.until((text) => text === 'pong:x');
    expect(target.seen[0]?.ended).toBe(false);
    expect(proxy.counts.open).toBe(2);
    control.socket.destroy();
    target.seen[0]?.socket.destroy();
    await proxy.until((counts) => counts.open === 0, 5_000, 'both connections closed');
  });

  it('lets a held connection whose client stays go on as a passing one after the hold', async () => {
    proxy.hold(50);
    const c = await client();
    c.socket.write('early');
    await proxy.until((counts) => counts.released === 1, 5_000, 'the hold ran out');
    await c.until((text) => text === 'pong:early');
    c.socket.write('-more');
    await target.until(() => target.seen[0]?.text === 'early-more');
  });

  it('takes a connection another listener accepted, in its mode, and cuts it like its own', async () => {
    const front = createServer((socket) => proxy.adopt(socket));
    const port = await listenOnLoopback(front, 'front');
    others.push({ close: () => new Promise<void>((resolve) => front.close(() => resolve())) });
    const c = await client(port);
    c.socket.write('via-front');
    await c.until((text) => text === 'pong:via-front');
    expect(proxy.counts).toMatchObject({ accepted: 1, open: 1 });
    proxy.blackhole();
    const stalled = await client(port);
    stalled.socket.write('waits');
    await proxy.until((counts) => counts.accepted === 2, 5_000, 'the second adopted');
    expect(target.seen.some((seen) => seen.text === 'waits')).toBe(false);
    expect(proxy.cut()).toBe(2);
    await Promise.all([c.closed(), stalled.closed()]);
  });

  it('sends new connections to a new target, leaving open ones where they are', async () => {
    const second = await Target.start();
    others.push(second);
    const before = await client();
    before.socket.write('old');
    await before.until((text) => text === 'pong:old');
    proxy.retarget(second.port);
    const after = await client();
    after.socket.write('new');
    await after.until((text) => text === 'pong:new');
    before.socket.write('+');
    await before.until((text) => text === 'pong:oldpong:+');
    expect(second.seen.map((seen) => seen.text)).toEqual(['new']);
    expect(target.seen.map((seen) => seen.text)).toEqual(['old+']);
  });
});
