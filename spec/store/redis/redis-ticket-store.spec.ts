/**
 * The ticket port on Redis, against a real redis-server: a record is handed out once across stores on
 * one Redis (GETDEL), kept with a PX ttl and expired by Redis itself (the spec awaits Redis's own expiry
 * event), kept under the ticket's SHA-256 only (no key or value holds the ticket, the token or the
 * token's digest), read as absent when damaged; refusals are typed (TypeError, ClosedError,
 * StoreUnavailableError while Redis does not answer).
 */
import { createHash } from 'node:crypto';
import Redis from 'ioredis';
import { ClosedError, StoreUnavailableError } from '../../../src/errors';
import { LogTickets, TICKET_TTL_MS } from '../../../src/host/api/log-tickets';
import { OperatorTokens } from '../../../src/host/api/operator-tokens';
import { ticketKey } from '../../../src/store/redis/redis-keys';
import { RedisTicketStore } from '../../../src/store/redis/redis-ticket-store';
import type { TicketRecord } from '../../../src/store/ticket-store';
import { VirtualClock } from '../../support/virtual-time';
import { redisStateRig } from './redis-rig';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const WATCHER_TOKEN = 'redis-ticket-watcher-token-do-not-store';
const record = (processId: string, environments: ReadonlySet<string> | undefined = new Set(['env-1', 'env-2'])): TicketRecord => ({
  caller: { name: 'watcher', role: 'view', environments },
  environmentId: 'env-1',
  processId,
  tokenSeal: 'cd'.repeat(32),
  expiresAt: 1_700_000_060_000,
});

describe('RedisTicketStore', () => {
  const rig = redisStateRig('exec-rx-tickets');
  const { client } = rig;
  const store = (): RedisTicketStore => new RedisTicketStore({ redis: client(), prefix: rig.prefix() });

  it('hands a record out once across the stores of one Redis, whichever takes it first', async () => {
    const [a, b] = [store(), store()];
    await a.put(sha256('t-1'), record('p-1'), 60_000);
    await a.put(sha256('t-2'), record('p-2', undefined), 60_000);
    expect(await b.take(sha256('t-1'))).toEqual(record('p-1'));
    expect(await a.take(sha256('t-1'))).toBeUndefined();
    // Six takes at once from two stores (two connections): one gets it.
    const takes = await Promise.all([a, b, a, b, a, b].map((one) => one.take(sha256('t-2'))));
    expect(takes.filter((taken) => taken !== undefined)).toEqual([record('p-2', undefined)]);
    expect(await a.take(sha256('never put'))).toBeUndefined();
    expect(await a.take('not a digest')).toBeUndefined();
  });

  it('keeps each record with a PX ttl, and Redis expires it: no take finds it afterwards', async () => {
    const tickets = store();
    const redis = client();
    const key = ticketKey(rig.prefix(), sha256('long'));
    await tickets.put(sha256('long'), record('p-1'), 60_000);
    const pttl = await redis.pttl(key);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(60_000);
    // Redis's own expiry event for the short one: awaited, never slept for.
    await redis.config('SET', 'notify-keyspace-events', 'Ex');
    const listener = client();
    const short = ticketKey(rig.prefix(), sha256('short'));
    const expired = new Promise<void>((resolve) => listener.on('pmessage', (_pattern: string, _channel: string, expiredKey: string) => expiredKey === short && resolve()));
    await listener.psubscribe('__keyevent@*__:expired');
    await tickets.put(sha256('short'), record('p-2'), 5);
    await expired;
    expect(await tickets.take(sha256('short'))).toBeUndefined();
    expect(await tickets.take(sha256('long'))).toEqual(record('p-1'));
  });

  it('keeps a ticket as its SHA-256 only: no key or value holds the ticket, the token or its digest', async () => {
    const tokens = new OperatorTokens([{ name: 'watcher', role: 'view', environments: ['env-1'], secret: WATCHER_TOKEN }]);
    const caller = tokens.authenticate(`Bearer ${WATCHER_TOKEN}`);
    if (caller === undefined) throw new Error('the watcher token is not accepted');
    const clock = new VirtualClock(1_700_000_000_000);
    const tickets = new LogTickets(clock, { store: store(), tokens });
    const { ticket, expiresAt } = await tickets.issue(caller, 'env-1', 'p-1');
    const redis = client();
    const keys = await redis.keys(`${rig.prefix()}:*`);
    expect(keys).toEqual([ticketKey(rig.prefix(), sha256(ticket))]);
    expect(keys[0]).toBe(`${rig.prefix()}:{global}:ticket:${sha256(ticket)}`);
    const value = (await redis.get(keys[0] ?? '')) ?? '';
    expect(JSON.parse(value)).toEqual({
      caller: { name: 'watcher', role: 'view', environments: ['env-1'] },
      environmentId: 'env-1',
      processId: 'p-1',
      tokenSeal: expect.stringMatching(/^[0-9a-f]{64}$/),
      expiresAt,
    });
    expect(expiresAt).toBe(1_700_000_000_000 + TICKET_TTL_MS);
    for (const secret of [ticket, WATCHER_TOKEN, sha256(WATCHER_TOKEN), Buffer.from(WATCHER_TOKEN).toString('base64')]) {
      for (const text of [...keys, value]) expect(text).not.toContain(secret);
    }
    // The ticket still opens the log once.
    expect(await tickets.redeem(ticket, 'env-1', 'p-1')).toEqual(caller);
    expect(await redis.exists(keys[0] ?? '')).toBe(0);
    tickets.close();
  });

  it('reads a damaged record as absent, and takes it all the same', async () => {
    const tickets = store();
    const redis = client();
    const damaged = [
      'not json',
      '[]',
      JSON.stringify({ ...record('p-1'), caller: { name: 'watcher', role: 'admin', environments: null } }),
      JSON.stringify({ ...record('p-1'), caller: { name: 'watcher', role: 'view', environments: [1] } }),
      JSON.stringify({ ...record('p-1'), caller: { name: 'watcher', role: 'view', environments: null }, expiresAt: 'soon' }),
      JSON.stringify({ caller: { name: 'watcher', role: 'view', environments: null }, environmentId: 'env-1', processId: 'p-1', tokenSeal: 7, expiresAt: 1 }),
    ];
    for (const [index, text] of damaged.entries()) {
      const key = ticketKey(rig.prefix(), sha256(`damaged-${index}`));
      await redis.set(key, text, 'PX', 60_000);
      expect(await tickets.take(sha256(`damaged-${index}`))).toBeUndefined();
      expect(await redis.exists(key)).toBe(0);
    }
  });

  it('refuses a malformed digest or ttl with a TypeError, and every call once closed with ClosedError', async () => {
    const tickets = store();
    await expect(tickets.put('the-ticket-itself', record('p-1'), 1_000)).rejects.toThrow(TypeError);
    await expect(tickets.put(sha256('t'), record('p-1'), 0)).rejects.toThrow(TypeError);
    await expect(tickets.put(sha256('t'), record('p-1'), 1.5)).rejects.toThrow(TypeError);
    expect(() => new RedisTicketStore({ redis: client(), prefix: 'bad{prefix' })).toThrow(TypeError);
    await Promise.all([tickets.close(), tickets.close()]);
    await expect(tickets.put(sha256('t'), record('p-1'), 1_000)).rejects.toThrow(ClosedError);
    await expect(tickets.take(sha256('t'))).rejects.toThrow(ClosedError);
  });

  it('rejects with StoreUnavailableError while Redis does not answer', async () => {
    const redis = new Redis(rig.server().url, { commandTimeout: 200, maxRetriesPerRequest: 0 });
    const tickets = new RedisTicketStore({ redis, prefix: rig.prefix() });
    try {
      await tickets.put(sha256('t'), record('p-1'), 60_000);
      rig.server().pause();
      await expect(tickets.take(sha256('t'))).rejects.toThrow(StoreUnavailableError);
      await expect(tickets.put(sha256('u'), record('p-1'), 60_000)).rejects.toThrow(StoreUnavailableError);
    } finally {
      rig.server().resume();
      redis.disconnect();
    }
  });
});
