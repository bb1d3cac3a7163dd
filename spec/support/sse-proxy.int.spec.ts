/**
 * The SSE fault proxy against a scripted HTTP server on loopback: it logs each request's resume point,
 * flags ids at or below it and ids out of order, knows when the host ended the body, and cuts at an
 * exact offset of the response bytes (the reader keeps exactly the frames before it).
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { trackForCleanup } from './executor';
import { listenOnLoopback } from './listen-on-loopback';
import { startSseProxy } from './sse-proxy';
import { openSse } from './sse-reader';

const frame = (id: number): string => `id: ${id}\nevent: output\ndata: {"seq":${id}}\n\n`;

/** Answers `/ids?list=3,4,4,6` with those frames (one write each), then ends (`/hold?list=…` never ends). */
async function scriptedServer(): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const list = url.searchParams.get('list') ?? '';
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const id of list.split(',').filter((s) => s !== '')) res.write(frame(Number(id)));
    if (url.pathname !== '/hold') res.end();
  });
  const port = await listenOnLoopback(server, 'scripted server');
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('SSE fault proxy', () => {
  it('logs the resume point, flags ids at or below it and out of order, and sees the body end', async () => {
    const server = trackForCleanup(await scriptedServer());
    const proxy = trackForCleanup(await startSseProxy(server.port));
    const good = await openSse({ url: `${proxy.origin}/ids?list=4,5,6`, token: 'not-a-real-token-000', lastEventId: 3 });
    expect(await good.ended).toBe('end');
    const bad = await openSse({ url: `${proxy.origin}/ids?list=3,5,5,7`, token: 'not-a-real-token-000', lastEventId: 4 });
    expect(await bad.ended).toBe('end');
    const byQuery = await openSse({ url: `${proxy.origin}/ids?list=2&after=1`, token: 'not-a-real-token-000' });
    expect(await byQuery.ended).toBe('end');

    const log = proxy.log.map((r) => ({ path: r.path, resume: r.lastEventId, after: r.after, status: r.status, first: r.firstId, last: r.lastId, ids: r.ids, below: r.atOrBelowResume, gaps: r.notContiguous, complete: r.complete }));
    expect(log).toEqual([
      { path: '/ids', resume: 3, after: undefined, status: 200, first: 4, last: 6, ids: 3, below: [], gaps: [], complete: true },
      { path: '/ids', resume: 4, after: undefined, status: 200, first: 3, last: 7, ids: 4, below: [3], gaps: [3, 5, 5, 7], complete: true },
      { path: '/ids', resume: undefined, after: 1, status: 200, first: 2, last: 2, ids: 1, below: [], gaps: [], complete: true },
    ]);
  });

  it('cuts at an exact offset of the response bytes: the reader keeps the whole frames before it', async () => {
    const server = trackForCleanup(await scriptedServer());
    const proxy = trackForCleanup(await startSseProxy(server.port));
    const probe = await openSse({ url: `${proxy.origin}/ids?list=1,2,3`, token: 'not-a-real-token-000' });
    await probe.ended;
    const whole = proxy.totalResponseBytes;
    // Cut 10 bytes into the next response's third frame: it ends `<frame 3>\r\n0\r\n\r\n`.
    const cutAt = whole + (whole - '0\r\n\r\n'.length - '\r\n'.length - frame(3).length + 10);
    proxy.cutAt([cutAt]);
    const cut = await openSse({ url: `${proxy.origin}/ids?list=1,2,3`, token: 'not-a-real-token-000' });
    expect(await cut.ended).toBe('cut');
    expect(proxy.totalResponseBytes).toBe(cutAt);
    expect(proxy.cuts).toBe(1);
    expect(cut.events.map((e) => e.id)).toEqual([1, 2]);
    expect(cut.partialBytes).toBeGreaterThan(0);
    expect(proxy.log[1]).toEqual(expect.objectContaining({ end: 'cut', cutInsideFrame: true, complete: false, lastId: 2, responseBytes: cutAt - whole }));
  });

  it('cuts every open connection at once: the reader keeps what it got', async () => {
    const server = trackForCleanup(await scriptedServer());
    const proxy = trackForCleanup(await startSseProxy(server.port));
    const held = await openSse({ url: `${proxy.origin}/hold?list=1,2`, token: 'not-a-real-token-000' });
    await new Promise<void>((resolve) => {
      const poll = (): void => (proxy.log[0]?.lastId === 2 ? resolve() : void setImmediate(poll));
      poll();
    });
    expect(proxy.cutAll()).toBe(1);
    expect(await held.ended).toBe('cut');
    expect(held.events.map((e) => e.id)).toEqual([1, 2]);
    expect(proxy.log[0]).toEqual(expect.objectContaining({ end: 'cut', complete: false, bytesAfterRequest: 0 }));
  });

  it.each(['reset', 'unlisten'] as const)('plays a host that is down (%s): open connections go, new ones fail at once, then pass again', async (mode) => {
    const server = trackForCleanup(await scriptedServer());
    const proxy = trackForCleanup(await startSseProxy(server.port));
    const held = await openSse({ url: `${proxy.origin}/hold?list=1`, token: 'not-a-real-token-000' });
    await proxy.refuse(mode);
    expect(await held.ended).toBe('cut');
    const refusal = openSse({ url: `${proxy.origin}/ids?list=1`, token: 'not-a-real-token-000' });
    await expect(refusal).rejects.toMatchObject({ code: mode === 'reset' ? 'ECONNRESET' : 'ECONNREFUSED' });
    expect(proxy.refused).toBe(mode === 'reset' ? 1 : 0);
    await proxy.accept();
    const again = await openSse({ url: `${proxy.origin}/ids?list=7`, token: 'not-a-real-token-000' });
    expect(await again.ended).toBe('end');
    expect(again.events.map((e) => e.id)).toEqual([7]);
    expect(proxy.log.map((r) => r.path)).toEqual(['/hold', '/ids']);
  });
});
