/**
 * Which process made a loopback TCP connection, from `/proc` (Linux, no privilege needed for one's own
 * children): the client's socket is found in `/proc/net/tcp` by its two ports, and its inode among the
 * file descriptors of the candidate processes. What lets one port in front of Redis tell the replicas'
 * connections apart (`./redis-front`) while every replica names the same Redis url.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';

/** `127.0.0.1:port` as `/proc/net/tcp` writes it (the address in host byte order, the port big-endian). */
const loopbackHex = (port: number): string => `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;

/** The inode of the socket 127.0.0.1:`localPort` → 127.0.0.1:`remotePort`, if `/proc/net/tcp` lists it. */
export async function socketInode(localPort: number, remotePort: number): Promise<string | undefined> {
  const local = loopbackHex(localPort);
  const remote = loopbackHex(remotePort);
  const table = await readFile('/proc/net/tcp', 'utf8').catch(() => '');
  for (const line of table.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] === local && fields[2] === remote) return fields[9];
  }
  return undefined;
}

/** Whether process `pid` holds the socket of `inode` among its file descriptors. */
async function holds(pid: number, inode: string): Promise<boolean> {
  const want = `socket:[${inode}]`;
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
  for (const fd of fds) {
    if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === want) return true;
  }
  return false;
}

/**
 * Which of `pids` made the connection whose client end is 127.0.0.1:`clientPort`, connected to
 * 127.0.0.1:`serverPort`; undefined when none of them holds it (or it is gone already).
 */
export async function connectionOwner(clientPort: number, serverPort: number, pids: readonly number[]): Promise<number | undefined> {
  const inode = await socketInode(clientPort, serverPort);
  if (inode === undefined || inode === '0') return undefined;
  for (const pid of pids) if (await holds(pid, inode)) return pid;
  return undefined;
}
