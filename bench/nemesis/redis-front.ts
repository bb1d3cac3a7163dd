/**
 * One port in front of Redis for every replica of the lab, with a fault proxy per replica behind it: each
 * replica's redis url file names this port (so every replica derives the same cluster id from its url,
 * as replicas of one cluster do, and answers with the same `exec-rx-host-instance`), and each connection
 * is handed to the proxy of the replica whose process made it (`./proc-sockets`). A partition between one
 * replica and Redis is its proxy's cut, refusal or blackhole. A connection no replica made (a tool's)
 * goes through a passing proxy of its own.
 */
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import { listenOnLoopback } from '../lib/loopback';
import type { FaultProxy } from './fault-proxy';
import { startFaultProxy } from './fault-proxy';
import { connectionOwner } from './proc-sockets';

/** The port in front of Redis (see the module's doc). */
export interface RedisFront {
  /** `redis://127.0.0.1:PORT`: what every replica's url file holds. */
  readonly url: string;
  readonly port: number;
  /** The proxy of replica `name` (made by {@link startRedisFront} for each name). */
  lane(name: string): FaultProxy;
  /** Replica `name` runs as `pid` now (after a restart: its new pid). */
  owns(name: string, pid: number): void;
  /** Connections that no replica was found to have made. */
  readonly unowned: number;
  /** Stops listening and closes every proxy and connection. Idempotent. */
  close(): Promise<void>;
}

/** Starts the front on a free loopback port, in front of Redis on `redisPort`, with one passing proxy per name. */
export async function startRedisFront(redisPort: number, names: readonly string[]): Promise<RedisFront> {
  const lanes = new Map<string, FaultProxy>();
  for (const name of names) lanes.set(name, await startFaultProxy(redisPort));
  const other = await startFaultProxy(redisPort);
  const pids = new Map<string, number>();
  let unowned = 0;
  let closing: Promise<void> | undefined;
  const pending = new Set<Socket>();
  const server = createServer({ pauseOnConnect: true }, (socket) => void route(socket));
  const route = async (socket: Socket): Promise<void> => {
    pending.add(socket);
    socket.on('error', () => undefined);
    const candidates = [...pids.values()];
    const pid = socket.remotePort === undefined ? undefined : await connectionOwner(socket.remotePort, port, candidates);
    pending.delete(socket);
    const name = [...pids].find(([, owner]) => owner === pid)?.[0];
    const lane = name === undefined ? undefined : lanes.get(name);
    if (lane === undefined) unowned += 1;
    socket.resume();
    if (closing !== undefined || socket.destroyed) socket.destroy();
    else (lane ?? other).adopt(socket);
  };
  const port = await listenOnLoopback(server);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    lane: (name) => {
      const lane = lanes.get(name);
      if (lane === undefined) throw new Error(`the Redis front has no lane ${name}`);
      return lane;
    },
    owns: (name, pid) => void pids.set(name, pid),
    get unowned() {
      return unowned;
    },
    close: () => {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of pending) socket.destroy();
        await Promise.all([...lanes.values(), other].map((lane) => lane.close()));
        await closed;
      })();
      return closing;
    },
  };
}
