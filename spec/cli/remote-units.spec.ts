/**
 * The pieces of the host commands that need no host: the fetch watcher's connection states, the `ls`
 * table and quoting, what a host's errors become (lines and exit codes), and how events are piped to
 * our stdout and stderr.
 */
import { PassThrough } from 'node:stream';
import type { Observable } from 'rxjs';
import { Subject, of, throwError } from 'rxjs';
import type { ConnectionState } from '../../src';
import { pipeEvents } from '../../src/cli/remote/event-output';
import { describeHostError, spawnFailureOf } from '../../src/cli/remote/host-errors';
import { lsJson, lsTable, shellQuote } from '../../src/cli/remote/ls-format';
import { rootReason, watchedFetch } from '../../src/cli/remote/watched-fetch';
import type { EnvironmentOverview, HostProcessEvent } from '../../src/client/host-types';
import { HostApiError } from '../../src/client/host-api-error';

const sse = { accept: 'text/event-stream' };

/** A body that sends `chunks`, then ends at `end()` or fails at `fail(error)`. */
function controlledBody(chunks: readonly string[]): { body: ReadableStream<Uint8Array>; end(): void; fail(error: Error): void } {
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
      for (const chunk of chunks) c.enqueue(new TextEncoder().encode(chunk));
    },
  });
  return { body, end: () => controller?.close(), fail: (error) => controller?.error(error) };
}

/** Reads a response body to its end as text (rejects when it fails). */
async function text(response: Response): Promise<string> {
  return new TextDecoder().decode(new Uint8Array(await response.arrayBuffer()));
}

function recorded(states$: Observable<ConnectionState>): { lines: string[]; completed: () => boolean } {
  const lines: string[] = [];
  let completed = false;
  states$.subscribe({ next: (s) => lines.push(s.state === 'disconnected' ? `disconnected: ${s.error.message}` : s.state), complete: () => (completed = true) });
  return { lines, completed: () => completed };
}

describe('watchedFetch', () => {
  it('passes a call through and reports the host answering', async () => {
    const watch = watchedFetch(() => Promise.resolve(new Response('{"ok":true}', { status: 201 })));
    const states = recorded(watch.states$);
    expect(await text(await watch.fetch('http://h/api', { method: 'POST' }))).toBe('{"ok":true}');
    expect(states.lines).toEqual(['connecting', 'connected']);
  });

  it('reports a fetch that failed with its root cause, and a 502 from a proxy', async () => {
    const failure = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') });
    const responses: (() => Promise<Response>)[] = [() => Promise.reject(failure), () => Promise.resolve(new Response('', { status: 502 }))];
    const watch = watchedFetch(() => (responses.shift() ?? (() => Promise.reject(new Error('none'))))());
    const states = recorded(watch.states$);
    await expect(watch.fetch('http://h/a')).rejects.toBe(failure);
    expect((await watch.fetch('http://h/a')).status).toBe(502);
    expect(states.lines).toEqual(['connecting', 'disconnected: connect ECONNREFUSED 127.0.0.1:9', 'disconnected: HTTP 502 from a proxy in between']);
  });

  it('hands an event stream on unchanged and reports its early end, but not an end after finish()', async () => {
    const first = controlledBody(['id: 1\n', 'data: x\n\n']);
    const second = controlledBody(['data: y\n\n']);
    const bodies = [first, second];
    const watch = watchedFetch(() => Promise.resolve(new Response(bodies.shift()?.body ?? null, { status: 200 })));
    const states = recorded(watch.states$);
    const cut = text(await watch.fetch('http://h/events', { headers: sse }));
    first.end();
    expect(await cut).toBe('id: 1\ndata: x\n\n');
    expect(states.lines).toEqual(['connecting', 'connected', 'disconnected: the event stream ended early']);
    const last = text(await watch.fetch('http://h/events', { headers: sse }));
    watch.finish();
    second.end();
    expect(await last).toBe('data: y\n\n');
    expect(states.lines).toEqual(['connecting', 'connected', 'disconnected: the event stream ended early', 'connected']);
    expect(states.completed()).toBe(true);
  });

  it('reports a broken event stream, but not one its reader aborted', async () => {
    const broken = controlledBody([]);
    const aborted = controlledBody([]);
    const bodies = [broken, aborted];
    const watch = watchedFetch(() => Promise.resolve(new Response(bodies.shift()?.body ?? null, { status: 200 })));
    const states = recorded(watch.states$);
    const reading = text(await watch.fetch('http://h/events', { headers: sse }));
    broken.fail(new Error('socket hang up'));
    await expect(reading).rejects.toThrow('socket hang up');
    const abort = new AbortController();
    const response = await watch.fetch('http://h/events', { headers: sse, signal: abort.signal });
    abort.abort();
    const readingAborted = text(response);
    aborted.fail(new Error('aborted'));
    await expect(readingAborted).rejects.toThrow('aborted');
    expect(states.lines).toEqual(['connecting', 'connected', 'disconnected: the event stream broke: socket hang up', 'connected']);
  });

  it('finds the deepest message of a cause chain', () => {
    expect(rootReason(new Error('a', { cause: new Error('b', { cause: new Error('c') }) }))).toBe('c');
    expect(rootReason('plain')).toBe('plain');
  });
});

describe('ls output', () => {
  const env = (id: string, processes: EnvironmentOverview['processes']): EnvironmentOverview => ({ id, generation: 2, state: 'connected', error: null, info: { big: 'x' }, processCount: processes.length, processes });
  const proc = (id: string, argv: string[], exitCode: number | null): EnvironmentOverview['processes'][number] => ({ id, environmentId: 'e', argv, tty: false, pipeStdin: true, state: exitCode === null ? 'running' : 'closed', exitCode, error: null });

  it('quotes arguments as a shell needs them', () => {
    expect(['ls', '-la', '/tmp/a_b.c', 'a b', "it's", '', 'x\ny', '$HOME'].map(shellQuote)).toEqual(['ls', '-la', '/tmp/a_b.c', "'a b'", `'it'\\''s'`, "''", '"x\\ny"', "'$HOME'"]);
  });

  it('lays out environments and their processes in columns, with a header even when there are none', () => {
    expect(lsTable([])).toBe('ENVIRONMENT  GEN  STATE  PROCESSES\n');
    expect(lsTable([env('a-long-environment', [proc('p1', ['sleep', '30'], null), proc('p22', ['sh', '-c', 'exit 3'], 3)]), env('b', [])])).toBe(
      [
        'ENVIRONMENT         GEN  STATE      PROCESSES',
        'a-long-environment  2    connected  2',
        '  ID   STATE    EXIT  ARGV',
        '  p1   running  -     sleep 30',
        "  p22  closed   3     sh -c 'exit 3'",
        'b                   2    connected  0',
        '',
      ].join('\n'),
    );
  });

  it('keeps only the documented fields in --json', () => {
    expect(lsJson('http://h', [env('e', [proc('p', ['true'], 0)])])).toEqual({
      host: 'http://h',
      environments: [{ id: 'e', generation: 2, state: 'connected', error: null, processes: [{ id: 'p', state: 'closed', exitCode: 0, argv: ['true'], tty: false, pipeStdin: true, error: null }] }],
    });
  });
});

describe('host errors', () => {
  // As the client makes it from the host's problem+json (errorOf): the detail in the message and as a field.
  const spawnFailed = (detail: string): HostApiError => new HostApiError('SPAWN_FAILED', `POST /api/v1/environments/e/processes: Unprocessable Entity: ${detail}`, 422, 'i', { detail });

  it('maps a start that could not spawn to 127 or 126 with a shell-like line', () => {
    expect(spawnFailureOf(spawnFailed('exec-server rejected process/start (-32603): No such file or directory (os error 2)'), 'nope', undefined)).toEqual({ exitCode: 127, line: 'cannot start nope: No such file or directory' });
    expect(spawnFailureOf(spawnFailed('exec-server rejected process/start (-32603): No such file or directory (os error 2)'), 'ls', '/gone')).toEqual({ exitCode: 127, line: 'cannot start ls: No such file or directory (or its directory /gone is missing)' });
    expect(spawnFailureOf(spawnFailed('cannot start /tmp: Permission denied'), '/tmp', undefined)).toEqual({ exitCode: 126, line: 'cannot start /tmp: Permission denied' });
    expect(spawnFailureOf(spawnFailed('cannot start in /gone: no such directory on the executor'), 'true', '/gone')).toEqual({ exitCode: 127, line: 'cannot start in /gone: no such directory on the executor' });
    expect(spawnFailureOf(spawnFailed('exec-server rejected process/start (-32603): Unable to spawn nope because:\nNo viable candidates found in PATH "/bin"'), 'nope', undefined)).toEqual({ exitCode: 127, line: 'cannot start nope: No such file or directory' });
    expect(spawnFailureOf(new HostApiError('STDIN_CLOSED', 'x', 409, 'i'), 'a', undefined)).toBeUndefined();
  });

  it('says a refused token, an unreachable host and the host’s problems in one line', () => {
    expect(describeHostError(new HostApiError('UNAUTHORIZED', 'overview: HTTP 401', 401, undefined), 'http://h')).toBe('the host at http://h refused the operator token (401): check EXEC_RX_TOKEN or --token-file');
    const unreachable = new HostApiError('HOST_UNREACHABLE', 'x', undefined, undefined, { cause: new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:1') }) });
    expect(describeHostError(unreachable, 'http://h')).toBe('cannot reach the host at http://h: connect ECONNREFUSED 127.0.0.1:1');
    expect(describeHostError(new HostApiError('PROCESS_NOT_FOUND', 'events: Not Found: no process p in environment e', 404, 'i', { detail: 'no process p in environment e' }), 'http://h')).toBe('no process p in environment e (PROCESS_NOT_FOUND)');
    expect(describeHostError(new HostApiError('PROCESS_GAP', 'events: the host sent seq 5 after 3', undefined, undefined), 'http://h')).toBe('events: the host sent seq 5 after 3');
  });
});

/** `events$` as the stream pipeEvents pulls from: cancelling it unsubscribes. */
function streamOf(events$: Observable<HostProcessEvent>): ReadableStream<HostProcessEvent> {
  let subscription: { unsubscribe(): void } | undefined;
  return new ReadableStream<HostProcessEvent>({
    start: (controller) => {
      subscription = events$.subscribe({ next: (event) => controller.enqueue(event), error: (error: unknown) => controller.error(error), complete: () => controller.close() });
    },
    cancel: () => subscription?.unsubscribe(),
  });
}

describe('pipeEvents', () => {
  const bytes = (text: string): HostProcessEvent => ({ type: 'output', seq: 1, stream: 'stdout', chunk: new TextEncoder().encode(text) });
  const streams = (): { stdout: PassThrough; stderr: PassThrough; out: () => string; err: () => string } => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    return { stdout, stderr, out: () => String(stdout.read() ?? ''), err: () => String(stderr.read() ?? '') };
  };

  it('writes the events and resolves complete, leaving no listener behind, also when they complete while subscribing', async () => {
    const io = streams();
    const seen: string[] = [];
    const events: HostProcessEvent[] = [bytes('out'), { type: 'output', seq: 2, stream: 'stderr', chunk: new TextEncoder().encode('err') }, { type: 'closed', seq: 3 }];
    expect(await pipeEvents(streamOf(of(...events)), io, () => undefined, (event) => seen.push(event.type))).toEqual({ kind: 'complete' });
    expect({ out: io.out(), err: io.err(), seen }).toEqual({ out: 'out', err: 'err', seen: ['output', 'output', 'closed'] });
    expect(io.stdout.listenerCount('error') + io.stderr.listenerCount('error')).toBe(0);
  });

  it('resolves error with what the events errored with', async () => {
    const io = streams();
    const failure = new HostApiError('PROCESS_GONE', 'gone', 404, 'i');
    expect(await pipeEvents(streamOf(throwError(() => failure)), io, () => undefined)).toEqual({ kind: 'error', error: failure });
    expect(io.stdout.listenerCount('error')).toBe(0);
  });

  it('resolves brokenPipe when our stdout fails, and stops reading the events', async () => {
    const io = streams();
    const events = new Subject<HostProcessEvent>();
    const done = pipeEvents(streamOf(events), io, () => undefined);
    events.next(bytes('a'));
    io.stdout.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(await done).toEqual({ kind: 'brokenPipe' });
    expect(events.observed).toBe(false);
    expect(io.stderr.listenerCount('error')).toBe(0);
  });
});
