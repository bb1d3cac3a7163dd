import type { Server } from 'node:net';

/** Listens on 127.0.0.1 at a free port and resolves with it; rejects if the server cannot listen. */
export async function listenOnLoopback(server: Server, what: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`${what} has no TCP address`);
  return address.port;
}
