/**
 * A preview's bounds while its body streams: the cap on bodies streaming per environment (503
 * PREVIEW_BUSY past it) and the bounded buffer (a client that falls `bufferBytes` behind is cut, since the
 * executor cannot be paused for one request).
 */
import '../../../support/executor';
import type { IncomingMessage } from 'node:http';
import { firstValueFrom } from 'rxjs';
import { filter, take } from 'rxjs/operators';
import { linesOf } from '../../../../src/exec/output-views';
import type { HttpTarget } from '../../../support/http-target';
import { OPERATOR_TOKEN } from '../api-host';
import { openRequest } from '../files-support';
import type { PreviewHost } from './preview-support';
import { preview, startPreviewHost, startTarget } from './preview-support';

jest.setTimeout(60_000);

const codeOf = (body: Buffer): unknown => (JSON.parse(body.toString()) as { code?: unknown }).code;

describe('a preview body streaming within its bounds', () => {
  let host: PreviewHost;
  let target: HttpTarget;
  const path = (rest: string): string => `/${host.environmentId}/${target.port}${rest}`;

  beforeAll(async () => {
    host = await startPreviewHost({ environmentId: 'preview-4', http: { streamsPerEnvironment: 1, bufferBytes: 256 * 1024 } });
    target = await startTarget(host);
  });
  afterAll(async () => {
    await target.stop();
  });

  it('answers 503 PREVIEW_BUSY (Retry-After) while the environment has its cap of bodies streaming, and serves again after', async () => {
    const { req, answer } = openRequest(host.previewUrl, 'GET', path('/sse'), { token: OPERATOR_TOKEN, headers: { accept: 'text/event-stream' } });
    const head = new Promise<number>((resolve) => req.once('response', (res) => resolve(res.statusCode ?? 0)));
    req.end();
    expect(await head).toBe(200);
    const busy = await preview(host, 'GET', path('/hello'), { token: OPERATOR_TOKEN });
    expect({ status: busy.status, code: codeOf(busy.body), retryAfter: busy.headers['retry-after'] }).toEqual({ status: 503, code: 'PREVIEW_BUSY', retryAfter: '1' });
    expect((await answer).complete).toBe(true);
    const again = await preview(host, 'GET', path('/hello'), { token: OPERATOR_TOKEN });
    expect({ status: again.status, body: again.body.toString() }).toEqual({ status: 200, body: 'hello' });
  });

  it('cuts a client that falls behind the buffer bound, and keeps serving others', async () => {
    const bytes = 64 * 1024 * 1024;
    const sent = firstValueFrom(target.process.events$.pipe(linesOf('stdout'), filter((line) => line === `sent ${bytes}`), take(1)));
    const { req, answer } = openRequest(host.previewUrl, 'GET', path(`/big?n=${bytes}`), { token: OPERATOR_TOKEN });
    // The client takes nothing until the target has written the whole body: the host's buffer for it passes 256 KiB
    // long before, and the host cuts it. Then the client reads what reached it, and the end of a cut connection.
    let paused: IncomingMessage | undefined;
    req.once('response', (res) => {
      paused = res;
      res.pause();
    });
    req.end();
    await sent;
    paused?.resume();
    const cut = await answer;
    expect(cut.complete).toBe(false);
    expect(cut.body.length).toBeLessThan(bytes);
    const other = await preview(host, 'GET', path('/hello'), { token: OPERATOR_TOKEN });
    expect({ status: other.status, body: other.body.toString() }).toEqual({ status: 200, body: 'hello' });
  });
});
