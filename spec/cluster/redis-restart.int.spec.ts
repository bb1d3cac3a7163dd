/**
 * Issue 33, Redis trouble: Redis restarted mid-stream, with its data (`--appendonly yes`, a clean
 * shutdown: nothing lost) and empty (its data gone). No executor exits and no process dies either way.
 * With its data, a subscriber gets every byte once, in order. Empty, the owner rewrites what it holds from
 * memory (owner and epoch, session, registration), the log is rebuilt from the next appends, and a
 * subscriber older than the rebuilt log gets one `truncated` marker for exactly what Redis lost, never a
 * silent hole; every seq is either given or covered by the marker.
 */
import Redis from 'ioredis';
import { ownerKey, registrationKey, sessionKey } from '../../src/store/redis/redis-keys';
import { ApiClient, paths } from '../host/api/api-client';
import type { SseEvent } from '../host/api/sse-reader';
import { within } from '../host/api/sse-reader';
import { startDirectExecutor } from '../support/executor';
import { replicaCluster } from './replicas';

jest.setTimeout(100_000);

const CREDENTIALS = { keyId: 'AKIDREDISRESTART', secret: 'redis-restart-secret-do-not-print', token: 'redis-restart-token-do-not-print' };
const LINES = 200;
/** 200 numbered lines, twenty a second (10 s). */
const SCRIPT = `i=1; while [ $i -le ${LINES} ]; do echo "line $i"; i=$((i+1)); sleep 0.05; done`;
const expectedLines = Array.from({ length: LINES }, (_v, i) => `line ${i + 1}\n`);

/** What a subscriber got: output text by seq, truncated markers' ranges, other events' names. */
function summary(events: readonly SseEvent[]): { text: string; covered: number[]; truncated: { fromSeq: number; toSeq: number; reason: string }[]; others: string[] } {
  let text = '';
  const covered: number[] = [];
  const truncated: { fromSeq: number; toSeq: number; reason: string }[] = [];
  const others: string[] = [];
  for (const event of events) {
    const data = JSON.parse(event.data) as { seq?: number; chunk?: string; nextSeq?: number; droppedEvents?: number; fromSeq?: number; toSeq?: number; reason?: string };
    if (event.event === 'output') {
      text += Buffer.from(data.chunk ?? '', 'base64').toString('utf8');
      covered.push(data.seq ?? 0);
    } else if (event.event === 'truncated') {
      const toSeq = (data.nextSeq ?? 1) - 1;
      const fromSeq = data.fromSeq ?? toSeq - (data.droppedEvents ?? 0) + 1;
      truncated.push({ fromSeq, toSeq, reason: data.reason ?? '' });
      for (let seq = fromSeq; seq <= toSeq; seq++) covered.push(seq);
    } else {
      others.push(event.event);
      if (data.seq !== undefined) covered.push(data.seq);
    }
  }
  return { text, covered, truncated, others };
}

describe('Redis restarted under two replicas, mid-stream', () => {
  let redis: Redis | undefined;
  // Before the cluster's afterAll stops redis-server (hooks run in the order declared): a client whose
  // server went away first waits to reconnect, and its timer outlives disconnect() (the leak check's Timeout).
  afterAll(() => redis?.disconnect());
  const cluster = replicaCluster('redis-restart', CREDENTIALS, { appendOnly: true });

  async function streamThrough(restart: { readonly empty: boolean }, env: string): Promise<{ got: ReturnType<typeof summary>; late: ReturnType<typeof summary>; exited: number | null }> {
    const a = await cluster.start(`a-${env}`);
    const b = await cluster.start(`b-${env}`);
    redis ??= new Redis(cluster.redis().url, { maxRetriesPerRequest: null });
    const executor = await startDirectExecutor({ remoteUrl: a.base, environmentId: env, credentials: { accessKeyId: CREDENTIALS.keyId, secretAccessKey: CREDENTIALS.secret } });
    try {
      await a.run.waitFor('stderr', `environment ${env} generation 1: connected`);
      const started = await new ApiClient(a.base, CREDENTIALS.token).post(paths.processes(env), { argv: ['sh', '-c', SCRIPT] });
      expect(started.status).toBe(201);
      const processId = (started.body as { id: string }).id;
      // The subscriber is on the other replica: it reads the Redis log alone.
      const opened = await new ApiClient(b.base, CREDENTIALS.token).events(paths.events(env, processId));
      if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}`);
      await opened.stream.next((event) => event.event === 'output' && Number(event.id ?? '0') >= 40, 30_000);
      const owner = await redis.hgetall(ownerKey('exec-rx', env));

      await cluster.redis().restart(restart);
      if (restart.empty) {
        // The owner rewrote what it holds from memory: the same owner and epoch, its session, its registration.
        await within(a.run.waitFor('stderr', 'rewrote the 1 environment(s) this replica owns'), 30_000, 'the owner rewrites');
        expect(await redis.hgetall(ownerKey('exec-rx', env))).toEqual(owner);
        expect(await redis.hget(sessionKey('exec-rx', env), 'sessionId')).not.toBeNull();
        expect(await redis.exists(registrationKey('exec-rx', env))).toBe(1);
      }
      // A subscriber from the start, after the restart: older than the rebuilt log when Redis lost its data.
      const after = await new ApiClient(b.base, CREDENTIALS.token).events(paths.events(env, processId));
      if (!('stream' in after)) throw new Error(`events answered ${after.refused.status}`);
      const got = summary(await opened.stream.ended(60_000));
      const late = summary(await after.stream.ended(60_000));
      const done = await new ApiClient(b.base, CREDENTIALS.token).get(paths.process(env, processId));
      expect(done.body).toMatchObject({ state: 'closed', exitCode: 0 });
      return { got, late, exited: executor.child.exitCode };
    } catch (error: unknown) {
      process.stderr.write(`--- a\n${cluster.stderr(a).slice(-6000)}\n--- b\n${cluster.stderr(b).slice(-6000)}\n`);
      throw error;
    } finally {
      await executor.stop();
    }
  }

  it('with its data (appendonly): nothing lost, every seq once and in order, no executor exits', async () => {
    const { got, late, exited } = await streamThrough({ empty: false }, 'kept-1');
    expect(got.truncated).toEqual([]);
    expect(late.truncated).toEqual([]);
    expect(late.text).toBe(expectedLines.join(''));
    expect(got.others).toEqual(['exited', 'closed']);
    expect(got.covered.every((seq, index) => seq === index + 1)).toBe(true);
    expect(got.text).toBe(expectedLines.join(''));
    expect(exited).toBeNull();
  });

  it('empty: the owner rewrites the registry; a subscriber from the start gets one truncated marker for exactly what Redis lost; nothing silent; no executor exits', async () => {
    const { got, late, exited } = await streamThrough({ empty: true }, 'emptied-1');
    for (const reader of [got, late]) {
      expect(reader.others).toEqual(['exited', 'closed']);
      // Every seq is given or covered by a marker, once, in order: no silent hole.
      expect(reader.covered.every((seq, index) => seq === index + 1)).toBe(true);
      expect(reader.truncated.every((marker) => marker.reason === 'evicted')).toBe(true);
      // What was given is the process's lines, less those a marker covers, in order, to the last.
      const numbers = reader.text.split('\n').filter((line) => line !== '').map((line) => Number(/^line (\d+)$/.exec(line)?.[1]));
      // Consecutive but where a marker covers (the live reader's, if any).
      expect(numbers.every((n, index) => index === 0 || n === (numbers[index - 1] ?? 0) + 1 || (reader.truncated.length > 0 && n > (numbers[index - 1] ?? 0)))).toBe(true);
      expect(numbers[numbers.length - 1]).toBe(LINES);
    }
    // The one that came after the loss reads from seq 1: the rebuilt log starts later, one marker says where.
    expect(late.truncated.length).toBe(1);
    expect(late.truncated[0]?.fromSeq).toBe(1);
    // The live one had read up to the loss (a marker only for what it had not read and Redis lost).
    expect(got.truncated.length).toBeLessThanOrEqual(1);
    expect(exited).toBeNull();
  });

  it('unreachable for a while (SIGSTOPped): the owner keeps serving, holds its appends, catches up; nothing lost, no executor exits', async () => {
    const env = 'paused-1';
    const a = await cluster.start(`a-${env}`);
    const b = await cluster.start(`b-${env}`);
    const executor = await startDirectExecutor({ remoteUrl: a.base, environmentId: env, credentials: { accessKeyId: CREDENTIALS.keyId, secretAccessKey: CREDENTIALS.secret } });
    try {
      await a.run.waitFor('stderr', `environment ${env} generation 1: connected`);
      const onOwner = new ApiClient(a.base, CREDENTIALS.token);
      const started = await onOwner.post(paths.processes(env), { argv: ['sh', '-c', SCRIPT] });
      expect(started.status).toBe(201);
      const processId = (started.body as { id: string }).id;
      const live = await onOwner.events(paths.events(env, processId));
      if (!('stream' in live)) throw new Error(`events answered ${live.refused.status}`);
      await live.stream.next((event) => event.event === 'output' && Number(event.id ?? '0') >= 30, 30_000);
      const unanswered = a.run.waitFor('stderr', 'the shared store does not answer');
      cluster.redis().pause();
      try {
        await within(unanswered, 30_000, 'the owner notices');
        // Meanwhile the owner serves what it holds: its own reader goes on from memory.
        const seen = Number(live.stream.events[live.stream.events.length - 1]?.id ?? '0');
        await live.stream.next((event) => Number(event.id ?? '0') > seen + 10, 30_000);
      } finally {
        cluster.redis().resume();
      }
      await within(a.run.waitFor('stderr', 'the shared store answers again'), 30_000, 'the owner reconnects');
      const fromRedis = await new ApiClient(b.base, CREDENTIALS.token).events(paths.events(env, processId));
      if (!('stream' in fromRedis)) throw new Error(`events answered ${fromRedis.refused.status}`);
      for (const reader of [summary(await live.stream.ended(60_000)), summary(await fromRedis.stream.ended(60_000))]) {
        expect(reader.truncated).toEqual([]);
        expect(reader.others).toEqual(['exited', 'closed']);
        expect(reader.covered.every((seq, index) => seq === index + 1)).toBe(true);
        expect(reader.text).toBe(expectedLines.join(''));
      }
      expect(executor.child.exitCode).toBeNull();
    } finally {
      cluster.redis().resume();
      await executor.stop();
    }
  });

});
