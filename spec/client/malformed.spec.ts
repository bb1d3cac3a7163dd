/**
 * What the client does with wire data it cannot read, in memory (a scripted fetch): every answer and
 * event is decoded with the wire codecs, so a malformed one ends the call or the stream with a typed
 * HostApiError (`DECODE_FAILED`, naming the codec's failing path), never a silently wrong value; a
 * problem whose code is outside the closed set is read by its status, like any other unreadable body.
 */
import { firstValueFrom } from 'rxjs';
import { HostApiError, HostClient } from '../../src/client';
import { FakeFetch, frames, HOST_A, json, SseBody } from './fake-fetch';

const ENV = 'env-1';
const PID = '11111111-2222-4333-8444-555555555555';

const client = (fake: FakeFetch): HostClient =>
  new HostClient({ url: 'http://host.test:8080', token: 'unit-spec-token-0123456789', fetch: fake.fetch, retry: { initialDelayMs: 1, maxDelayMs: 4 }, random: () => 0.5 });

/** What a promise or a stream ended with: the error, or `undefined` when it did not fail. */
const failure = (pending: Promise<unknown>): Promise<unknown> =>
  pending.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('HostClient: a malformed answer is a typed error', () => {
  it('terminate answered with anything but { running: boolean } rejects DECODE_FAILED, not false', async () => {
    for (const body of [{}, { running: 'yes' }, { running: null }, { status: 'ended' }, [true]]) {
      const fake = new FakeFetch().reply(json(200, body));
      const error = await failure(client(fake).terminate(ENV, PID));
      expect(error).toBeInstanceOf(HostApiError);
      expect({ body, error }).toEqual({
        body,
        error: expect.objectContaining({ code: 'DECODE_FAILED', status: 200, hostInstance: HOST_A, message: expect.stringContaining('TerminateResult') }),
      });
      // The host answered: not sent again.
      expect(fake.calls).toHaveLength(1);
    }
  });

  it('terminate still reads both answers the host gives (extra fields dropped)', async () => {
    const fake = new FakeFetch().reply(json(200, { running: true, extra: 1 }), json(200, { running: false }));
    const host = client(fake);
    expect(await host.terminate(ENV, PID)).toBe(true);
    expect(await host.terminate(ENV, PID)).toBe(false);
  });

  it('a problem whose code is outside the closed set is read by its status (HOST_ERROR), never cast into a code', async () => {
    const body = { type: 'about:blank', title: 'conflict', status: 409, code: 'NOT_A_CODE', detail: 'some detail', hostInstance: HOST_A };
    const fake = new FakeFetch().reply(new Response(JSON.stringify(body), { status: 409, headers: { 'content-type': 'application/problem+json', 'exec-rx-host-instance': HOST_A } }));
    const error = await failure(client(fake).endStdin(ENV, PID));
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'HOST_ERROR', status: 409, hostInstance: HOST_A, detail: undefined });
  });
});

describe('HostClient.events$: a malformed event is a typed error', () => {
  it('a failed event whose code is outside the closed set, or without a message, errors DECODE_FAILED naming FailedEventData', async () => {
    for (const data of [{ code: 'NOT_A_CODE', message: 'm' }, { code: 'RESUME_FAILED' }, { code: 7, message: 'm' }]) {
      const fake = new FakeFetch().reply(new SseBody(`event: failed\ndata: ${JSON.stringify(data)}\n\n`));
      const error = await failure(firstValueFrom(client(fake).events$(ENV, PID)));
      expect(error).toBeInstanceOf(HostApiError);
      expect({ data, error }).toEqual({ data, error: expect.objectContaining({ code: 'DECODE_FAILED', message: expect.stringMatching(/^failed event: .*FailedEventData/) }) });
      expect(fake.calls).toHaveLength(1);
    }
  });

  it('a failed event with a known code still errors with that code', async () => {
    const fake = new FakeFetch().reply(new SseBody(frames.failed('PROCESS_FAILED', 'it broke')));
    await expect(firstValueFrom(client(fake).events$(ENV, PID))).rejects.toMatchObject({ code: 'PROCESS_FAILED', message: 'it broke' });
  });

  it('exited, closed and truncated events with the wrong fields error DECODE_FAILED, each after what came before', async () => {
    const broken = [
      ['exited', { seq: 2, exitCode: 1.5 }, 'ExitedEventData'],
      ['closed', { seq: '2' }, 'ClosedEventData'],
      ['truncated', { nextSeq: 5 }, 'TruncatedEventData'],
      ['output', { seq: 2, stream: 'stdout' }, 'OutputEventData'],
    ] as const;
    for (const [event, data, codec] of broken) {
      const seen: number[] = [];
      const fake = new FakeFetch().reply(new SseBody(frames.output(1, 'a'), `id: 2\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
      const error = await new Promise<unknown>((resolve) =>
        client(fake)
          .events$(ENV, PID)
          .subscribe({ next: (e) => seen.push(e.type === 'truncated' ? e.nextSeq : e.seq), error: resolve, complete: () => resolve(undefined) }),
      );
      expect(error).toBeInstanceOf(HostApiError);
      expect({ event, error, seen }).toEqual({ event, error: expect.objectContaining({ code: 'DECODE_FAILED', message: expect.stringContaining(codec) }), seen: [1] });
    }
  });

  it('an event that is not JSON errors DECODE_FAILED', async () => {
    const fake = new FakeFetch().reply(new SseBody('id: 1\nevent: exited\ndata: {"seq":1,\n\n'));
    await expect(firstValueFrom(client(fake).events$(ENV, PID))).rejects.toMatchObject({ code: 'DECODE_FAILED', message: expect.stringMatching(/^exited event: /) });
  });
});

describe('HostClient.environments$: a malformed snapshot is a typed error', () => {
  it('an overview whose environment lacks fields, or whose process has an unknown state, errors DECODE_FAILED', async () => {
    const environment = { id: ENV, generation: 1, state: 'connected', error: null, info: null, processCount: 1 };
    const process = { id: PID, environmentId: ENV, argv: ['/bin/true'], tty: false, pipeStdin: false, state: 'running', exitCode: null, error: null };
    const snapshots = [
      { hostInstance: HOST_A, environments: [{ id: ENV, processes: [] }] },
      { hostInstance: HOST_A, environments: [{ ...environment, processes: [{ ...process, state: 'sleeping' }] }] },
      { environments: [] },
    ];
    for (const snapshot of snapshots) {
      const fake = new FakeFetch().reply(new SseBody(`event: overview\ndata: ${JSON.stringify(snapshot)}\n\n`));
      const error = await failure(firstValueFrom(client(fake).environments$));
      expect(error).toBeInstanceOf(HostApiError);
      expect({ snapshot, error }).toEqual({ snapshot, error: expect.objectContaining({ code: 'DECODE_FAILED', message: expect.stringMatching(/^overview: .*Overview/) }) });
    }
  });

  it('a well-formed overview still arrives', async () => {
    const environment = { id: ENV, generation: 1, state: 'connected', error: null, info: null, processCount: 0, processes: [] };
    const fake = new FakeFetch().reply(new SseBody(`event: overview\ndata: ${JSON.stringify({ hostInstance: HOST_A, environments: [environment] })}\n\n`));
    expect(await firstValueFrom(client(fake).environments$)).toEqual([environment]);
  });
});
