/** A body over the limit, sent by Node's own fetch (undici), still gets the 413 problem+json (a lingering close). */
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
    const chunk = new Uint8Array(1024 * 1024).fill(0x20);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= SIXTY_MB) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    await expectBodyTooLarge(await fetch(processesUrl(), { method: 'POST', headers, body, duplex: 'half' } as RequestInit));
  });
});
