/**
 * Loopback helpers the bench's and the specs' launchers share: a free port on 127.0.0.1, waiting for
 * something to accept connections on one, and stopping a child process with a grace period.
 */
import type { ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';

/** Listens `server` on a free port of 127.0.0.1; resolves with the port, rejects with the listen's error. */
export async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

/** A port on 127.0.0.1 that was free a moment ago (listened on, then closed). */
export async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listenOnLoopback(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Whether something accepts a TCP connection on 127.0.0.1:`port` now (the probe is closed at once). */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * Sends `signal` to `child` (SIGCONT first, in case it was stopped), SIGKILL after `graceMs`; resolves
 * once it exited (at once when it had).
 */
export async function halt(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGCONT');
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
