/**
 * A body over the limit, sent by Node's own fetch (undici), still gets the 413 problem+json: the host reads
 * and discards the rest of a refused body up to LINGER_BYTES (nginx's lingering close) instead of closing
 * under the client's write. The raw-socket case shows it whatever the timing of fetch: the client reads
 * the 413 first, then writes the rest of its body, and no write is refused.
 */
import { repeatedBody } from '../../support/repeated-body';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { LINGER_BYTES } from '../../../src/host/api/json-body';
import { OPERATOR_TOKEN, startApiHost } from './api-host';
import type { ApiHost } from './api-host';

const ENV = 'lingering-413-1';
const MAX_BODY = 64 * 1024;
const SIXTY_MB = 60 * 1000 * 1000;

describe('a body over the limit sent by fetch', () => {
  let setup: ApiHost;
  beforeAll(async () => {
    setup = await startApiHost({ environmentId: ENV, operator: { maxBodyBytes: MAX_BODY } });
  });

  const processesUrl = (): string => `${setup.host.url}/api/v1/environments/${ENV}/processes`;
  const headers = { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' };

  const expectBodyTooLarge = async (response: Response): Promise<void> => {
    expect(response.status).toBe(413);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toMatchObject({ status: 413, code: 'BODY_TOO_LARGE' });
  };

  it('gets 413 BODY_TOO_LARGE for a 60 MB POST with a Content-Length', async () => {
    const body = Buffer.alloc(SIXTY_MB, 0x20);
    await expectBodyTooLarge(await fetch(processesUrl(), { method: 'POST', headers, body }));
  });

  it('gets 413 BODY_TOO_LARGE for a 60 MB POST streamed without a Content-Length (chunked)', async () => {
    const body = repeatedBody(SIXTY_MB, new Uint8Array(1024 * 1024).fill(0x20));
    await expectBodyTooLarge(await fetch(processesUrl(), { method: 'POST', headers, body, duplex: 'half' } as RequestInit));
  });

  /** A raw HTTP/1.1 POST of `declared` bytes: writes `first` bytes, resolves with the socket and the answer's head once it came. */
  async function rawPost(declared: number, first: number): Promise<{ socket: Socket; head: string; errors: Error[] }> {
    const url = new URL(processesUrl());
    const socket = connect(Number(url.port), url.hostname);
    const errors: Error[] = [];
    socket.on('error', (error) => errors.push(error));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(`POST ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${OPERATOR_TOKEN}\r\ncontent-type: application/json\r\ncontent-length: ${declared}\r\n\r\n`);
    socket.write(Buffer.alloc(first, 0x20));
    const head = await new Promise<string>((resolve) => {
      let text = '';
      const onData = (chunk: Buffer): void => {
        text += chunk.toString('latin1');
        if (!text.includes('\r\n\r\n')) return;
        socket.off('data', onData);
        resolve(text);
      };
      socket.on('data', onData);
    });
    return { socket, head, errors };
  }

  it('reads and discards the rest of a refused body: a client that writes it after reading the 413 is never reset', async () => {
    const { socket, head, errors } = await rawPost(SIXTY_MB, 1024 * 1024);
    expect(head).toMatch(/^HTTP\/1\.1 413 /);
    expect(head.toLowerCase()).not.toContain('connection: close');
    // The rest of the body, after the answer: every write taken (none EPIPE or reset).
    const piece = Buffer.alloc(1024 * 1024, 0x20);
    let closed = false;
    let wake = (): void => undefined;
    socket.once('close', () => ((closed = true), wake()));
    for (let left = SIXTY_MB - piece.byteLength; left > 0 && !closed; left -= piece.byteLength) {
      const part = left >= piece.byteLength ? piece : piece.subarray(0, left);
      if (!socket.write(part)) await new Promise<void>((resolve) => ((wake = resolve), socket.once('drain', resolve)));
    }
    expect({ closed, errors: errors.map(String) }).toEqual({ closed: false, errors: [] });
    // The body drained, the connection is still usable: a second request on it is answered.
    socket.write(`GET /api/v1/environments/${ENV}/processes HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${OPERATOR_TOKEN}\r\n\r\n`);
    const second = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (text.includes('HTTP/1.1 200')) resolve(text);
      });
    });
    expect(second).toContain('HTTP/1.1 200');
    expect(errors).toEqual([]);
    socket.destroy();
  });

  it('says Connection: close at once for a body declared past the bound, and reads none of it', async () => {
    const { socket, head } = await rawPost(MAX_BODY + LINGER_BYTES + 1, 1024);
    expect(head).toMatch(/^HTTP\/1\.1 413 /);
    expect(head.toLowerCase()).toContain('connection: close');
    await new Promise<void>((resolve) => (socket.closed ? resolve() : socket.once('close', () => resolve())));
  });
});
