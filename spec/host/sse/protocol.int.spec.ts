/**
 * The operator API's process event stream, against the real executor: its response headers (an event
 * stream, never cached, never buffered by a proxy, never compressed), the comment ping, `?after=` and
 * `Last-Event-ID` resuming alike, an `after` at or beyond the last seq waiting for live events, and frames
 * that parse as SSE with `id:` equal to the data's seq.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SseConnection, SseEvent } from '../../support/sse-reader';
import { openSse, readToEnd } from '../../support/sse-reader';
import type { SseHost } from './sse-setup';
import { GroundTruth, decode, lineOf, startSseHost, within } from './sse-setup';

const PING_MS = 100;

describe('operator API event stream: headers, ping, resume by ?after= or Last-Event-ID, live after the last seq', () => {
  let setup: SseHost;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-sse-protocol-'));
    setup = await startSseHost({ environmentId: 'sse-protocol', operator: { sse: { pingMs: PING_MS } } });
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('answers with the SSE headers, pings, resumes alike from ?after= and Last-Event-ID, and waits for live events past the last seq', async () => {
    // Three events, then it waits for the go file, then two more, exit and close.
    const script = "printf 'one\\n'; sleep 0.05; printf 'two\\n' >&2; sleep 0.05; printf 'three\\n'; while [ ! -e go ]; do sleep 0.02; done; printf 'four\\n'; sleep 0.05; printf 'five\\n'";
    const { resource, process } = await setup.start(['/bin/sh', '-c', script], work);
    const truth = new GroundTruth(process);
    await truth.when(() => truth.stdoutText() === 'one\nthree\n' && truth.text('stderr') === 'two\n');
    const last = truth.lastSeq;
    const url = `${setup.origin}${setup.eventsPath(resource.id)}`;

    // Waiting for live: after the last seq (by query and by header), and two beyond it.
    const pings: string[] = [];
    let twoPings = (): void => undefined;
    const pinged = new Promise<void>((resolve) => (twoPings = resolve));
    const live: SseConnection[] = [];
    const atLastByQuery = await openSse({
      url: `${url}?after=${last}`,
      token: setup.token,
      onComment: (comment) => {
        pings.push(comment);
        if (pings.length === 2) twoPings();
      },
    });
    live.push(atLastByQuery);
    live.push(await openSse({ url, token: setup.token, lastEventId: last }));
    live.push(await openSse({ url: `${url}?after=${last + 2}`, token: setup.token }));
    for (const connection of live) expect(connection.status).toBe(200);

    const headers = atLastByQuery.headers;
    expect(headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(headers['cache-control']).toBe('no-store');
    expect(headers['x-accel-buffering']).toBe('no');
    expect([undefined, 'identity']).toContain(headers['content-encoding']);
    expect(headers['content-length']).toBeUndefined();
    expect(headers['exec-rx-host-instance']).toBe(setup.host.instanceId);

    // The ping arrives while nothing else does (the process waits for the go file).
    await within(pinged, 5_000, 'two pings');
    expect(pings).toEqual([' ping', ' ping']);
    expect(live.map((c) => c.events.length)).toEqual([0, 0, 0]);
    expect(truth.lastSeq).toBe(last);

    // Replays: the same resume point by query and by header gives the same events.
    const replayByQuery = readToEndOnce(`${url}?after=1`, setup.token);
    const replayByHeader = readToEndOnce(url, setup.token, 1);

    writeFileSync(join(work, 'go'), '');
    const ends = await Promise.all(live.map((c) => c.ended));
    expect(ends).toEqual(['end', 'end', 'end']);
    await truth.done;
    expect(truth.problems).toEqual([]);
    expect(truth.stdoutText()).toBe('one\nthree\nfour\nfive\n');

    const lines = (events: readonly SseEvent[]): string[] => events.map(lineOf);
    expect(lines(live[0]?.events ?? [])).toEqual(truth.linesAfter(last));
    expect(lines(live[1]?.events ?? [])).toEqual(truth.linesAfter(last));
    expect(lines(live[2]?.events ?? [])).toEqual(truth.linesAfter(last + 2));
    expect(truth.linesAfter(last + 2).length).toBeGreaterThanOrEqual(1);
    expect(lines(await replayByQuery)).toEqual(truth.linesAfter(1));
    expect(lines(await replayByHeader)).toEqual(truth.linesAfter(1));

    // From the start (no resume point): everything; every id is its data's seq; whole frames.
    const all = await readToEnd({ url, token: setup.token });
    expect(all.connections).toEqual([{ lastEventId: undefined, status: 200, events: truth.lastSeq, end: 'end', partialBytes: 0 }]);
    expect(lines(all.events)).toEqual(truth.linesAfter(0));
    expect(all.events.map((e) => decode(e).seq)).toEqual(Array.from({ length: truth.lastSeq }, (_, i) => i + 1));
    expect(all.events.map((e) => e.event).filter((type) => type !== 'output')).toEqual(['exited', 'closed']);
    expect(all.events.at(-1)?.event).toBe('closed');

    // `?after=` wins over Last-Event-ID when both are sent.
    const both = await openSse({ url: `${url}?after=${truth.lastSeq - 1}`, token: setup.token, lastEventId: 0 });
    expect(await both.ended).toBe('end');
    expect(lines(both.events)).toEqual(truth.linesAfter(truth.lastSeq - 1));

    // Resuming at or past the end of a closed process (the client has `closed`): nothing, and the end.
    for (const after of [truth.lastSeq, truth.lastSeq + 3]) {
      const done = await openSse({ url, token: setup.token, lastEventId: after });
      expect({ after, end: await done.ended, events: lines(done.events) }).toEqual({ after, end: 'end', events: [] });
    }
    expect(await setup.eventStreams()).toBe(0);
  });
});

/** One connection's events, after its body ended. */
async function readToEndOnce(url: string, token: string, lastEventId?: number): Promise<readonly SseEvent[]> {
  const connection = await openSse({ url, token, ...(lastEventId === undefined ? {} : { lastEventId }) });
  await connection.ended;
  return connection.events;
}
