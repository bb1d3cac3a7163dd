/**
 * The event streams' timers in virtual time: the hub's `: ping` every `pingMs` while a stream is open (and
 * no timer once none is), and the stall timer that ends a paused replay its client drains nothing of.
 * Responses are real ServerResponses with no socket under them: what is written stays buffered, so
 * nothing ever drains. On a real timer none of these would fire while the virtual clock moves.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { of } from 'rxjs';
import type { ProcessEvent } from '../../../src/exec/process-event';
import type { EventSources } from '../../../src/host/api/event-sources';
import { streamProcessEvents } from '../../../src/host/api/process-event-stream';
import { SseHub } from '../../../src/host/api/sse';
import { DEFAULT_SSE_LIMITS } from '../../../src/host/api/sse-limits';
import { VirtualClock } from '../../support/virtual-time';

const PING = ': ping\n\n';

/** A GET's response with nothing under it, and every chunk written to it (headers aside). */
function response(): { readonly res: ServerResponse; readonly written: string[] } {
  const req = new IncomingMessage(new Socket());
  req.method = 'GET';
  const res = new ServerResponse(req);
  const written: string[] = [];
  const write = res.write.bind(res);
  jest.spyOn(res, 'write').mockImplementation(((chunk: Buffer | string, ...rest: never[]) => {
    written.push(chunk.toString());
    return write(chunk, ...rest);
  }) as ServerResponse['write']);
  return { res, written };
}

const pings = (written: readonly string[]): number => written.filter((chunk) => chunk === PING).length;

describe('SseHub: the ping interval (virtual time)', () => {
  it('pings every open stream each pingMs, on the hub\'s scheduler, and holds no timer once the last stream ended', async () => {
    const clock = new VirtualClock();
    const hub = new SseHub({ ...DEFAULT_SSE_LIMITS, pingMs: 15_000 }, 'host-1', clock);
    const a = response();
    const b = response();
    const first = hub.open(a.res, 'token-a');
    await clock.advance(14_999);
    expect(pings(a.written)).toBe(0);
    await clock.advance(1);
    expect(pings(a.written)).toBe(1);
    const second = hub.open(b.res, 'token-b');
    await clock.advance(15_000);
    expect([pings(a.written), pings(b.written)]).toEqual([2, 1]);
    await clock.advance(30_000);
    expect([pings(a.written), pings(b.written)]).toEqual([4, 3]);
    first.end();
    second.end();
    expect(hub.size).toBe(0);
    expect(clock.actions).toHaveLength(0);
    await clock.advance(60_000);
    expect([pings(a.written), pings(b.written)]).toEqual([4, 3]);
  });
});

describe('streamProcessEvents: the stall timer (virtual time)', () => {
  it('ends a replay paused at the high water once its client drained nothing for stallMs, not before', async () => {
    const clock = new VirtualClock();
    // A buffer bound of 4 KiB: a replay pauses at 2 KiB.
    const hub = new SseHub({ ...DEFAULT_SSE_LIMITS, bufferBytes: 4096 }, 'host-1', clock);
    const { res, written } = response();
    const stream = hub.open(res, 'token-a');
    const chunk = new Uint8Array(256).fill(0x61);
    const events: ProcessEvent[] = Array.from({ length: 32 }, (_, i) => ({ type: 'output', seq: i + 1, stream: 'stdout', chunk }));
    // What a replay reads: the history from seq 1 on (the executor's window is never asked).
    const sources: EventSources = {
      history: { historyStartSeq: 1, eventsAfter$: () => of(...events) },
      window: { read: () => Promise.reject(new Error('the window is not read')), closeSeqBefore: () => undefined },
    };
    streamProcessEvents(sources, stream, 0, { follow: true, stallMs: 30_000, scheduler: clock });
    const sent = written.filter((text) => text.startsWith('id: ')).length;
    expect({ paused: sent > 0 && sent < events.length, ended: stream.isEnded }).toEqual({ paused: true, ended: false });
    await clock.advance(29_999);
    expect(stream.isEnded).toBe(false);
    await clock.advance(1);
    expect(stream.isEnded).toBe(true);
    expect(written.filter((text) => text.startsWith('id: '))).toHaveLength(sent);
    expect(hub.size).toBe(0);
    expect(clock.actions).toHaveLength(0);
  });
});
