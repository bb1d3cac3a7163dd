/**
 * The host's deadline on a request's body (src/host/body-deadline.ts), on a real HTTP server and socket
 * with virtual time: a body that has not ended 15 s after its head gets 408 and a closed connection; a
 * route that lifted the deadline (an upload) is left alone however long it takes; a body that ended in time
 * is never touched.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { VirtualTimeScheduler } from 'rxjs';
import { BODY_DEADLINE_MS, liftBodyDeadline, startBodyDeadline } from '../../src/host/body-deadline';

describe('the body deadline', () => {
  let server: Server;
  let scheduler: VirtualTimeScheduler;
  let seen: (req: IncomingMessage, res: ServerResponse) => void = () => undefined;
  beforeEach(async () => {
    scheduler = new VirtualTimeScheduler();
    server = createServer((req, res) => {
      startBodyDeadline(req, res, scheduler);
      seen(req, res);
    });
    server.requestTimeout = 0;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** A raw request whose body is declared 10 bytes and sends 1; resolves once the server has its head. */
  async function slowRequest(onHead: (req: IncomingMessage) => void = () => undefined): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
    const headed = new Promise<void>((resolve) => (seen = (req) => (onHead(req), resolve())));
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => void (text += chunk));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write('PUT /upload HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\nx');
    await headed;
    return { socket, received: () => text, closed };
  }

  it('answers 408 and closes the connection when the body has not ended in 15 s', async () => {
    const { received, closed } = await slowRequest();
    scheduler.flush();
    expect(scheduler.now()).toBe(BODY_DEADLINE_MS);
    await closed;
    expect(received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('leaves a lifted one alone past the deadline: its route bounds it', async () => {
    const { socket, received } = await slowRequest((req) => liftBodyDeadline(req));
    scheduler.flush();
    expect(scheduler.now()).toBe(0);
    expect({ destroyed: socket.destroyed, received: received() }).toEqual({ destroyed: false, received: '' });
    socket.destroy();
  });

  it('never touches a body that ended in time', async () => {
    const answered = new Promise<string>((resolve) => {
      seen = (req, res) => req.resume().once('end', () => res.end('ok'));
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      let text = '';
      socket.setEncoding('latin1').on('data', (chunk: string) => {
        text += chunk;
        if (text.endsWith('ok')) {
          resolve(text);
          socket.destroy();
        }
      });
      socket.write('PUT /upload HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nhi');
    });
    expect(await answered).toMatch(/^HTTP\/1\.1 200 /);
    scheduler.flush();
    expect(scheduler.now()).toBe(0);
  });
});
