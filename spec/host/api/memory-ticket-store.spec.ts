/**
 * The ticket port in one host's memory, on virtual time: a record is taken once (the very record put),
 * forgotten by its timer at its ttl on the host's scheduler, replaced by a put under the same digest, and
 * every timer is cancelled by `close()`, after which calls reject with ClosedError.
 */
import { createHash } from 'node:crypto';
import { ClosedError } from '../../../src/errors';
import { MemoryTicketStore } from '../../../src/host/api/memory-ticket-store';
import type { TicketRecord } from '../../../src/store/ticket-store';
import { VirtualClock } from '../../support/virtual-time';

const digest = (ticket: string): string => createHash('sha256').update(ticket).digest('hex');
const record = (processId: string): TicketRecord => ({
  caller: { name: 'watcher', role: 'view', environments: new Set(['env-1']) },
  environmentId: 'env-1',
  processId,
  tokenSeal: 'ab'.repeat(32),
  expiresAt: 100,
});

describe('MemoryTicketStore', () => {
  it('hands a record out once: the very record put', async () => {
    const store = new MemoryTicketStore(new VirtualClock());
    const kept = record('p-1');
    await store.put(digest('t-1'), kept, 100);
    expect(store.size).toBe(1);
    expect(await store.take(digest('t-1'))).toBe(kept);
    expect(await store.take(digest('t-1'))).toBeUndefined();
    expect(await store.take(digest('never put'))).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('forgets a record at its ttl, on the scheduler, and no sooner', async () => {
    const clock = new VirtualClock();
    const store = new MemoryTicketStore(clock);
    await store.put(digest('early'), record('p-1'), 100);
    await store.put(digest('late'), record('p-2'), 100);
    expect(clock.delays).toEqual([100, 100]);
    await clock.advance(99);
    expect(await store.take(digest('early'))).toEqual(record('p-1'));
    await clock.advance(1);
    expect(await store.take(digest('late'))).toBeUndefined();
    expect(store.size).toBe(0);
    expect(clock.actions).toHaveLength(0);
  });

  it('replaces a record put again under its digest, with a new ttl (the old timer cancelled)', async () => {
    const clock = new VirtualClock();
    const store = new MemoryTicketStore(clock);
    await store.put(digest('again'), record('p-1'), 100);
    await clock.advance(50);
    await store.put(digest('again'), record('p-2'), 100);
    expect(clock.actions).toHaveLength(1);
    await clock.advance(99);
    expect(await store.take(digest('again'))).toEqual(record('p-2'));
  });

  it('refuses a digest that is no hex SHA-256, and a ttl that is no whole number of ms > 0, with a TypeError', async () => {
    const store = new MemoryTicketStore(new VirtualClock());
    await expect(store.put('the-ticket-itself', record('p-1'), 100)).rejects.toThrow(TypeError);
    await expect(store.put(digest('t').toUpperCase(), record('p-1'), 100)).rejects.toThrow(TypeError);
    for (const ttl of [0, -1, 1.5, Number.NaN]) await expect(store.put(digest('t'), record('p-1'), ttl)).rejects.toThrow(TypeError);
    expect(store.size).toBe(0);
  });

  it('forgets every record and cancels every timer on close; later calls reject with ClosedError', async () => {
    const clock = new VirtualClock();
    const store = new MemoryTicketStore(clock);
    await store.put(digest('a'), record('p-1'), 100);
    await store.put(digest('b'), record('p-2'), 200);
    store.close();
    store.close();
    expect(store.size).toBe(0);
    expect(clock.actions).toHaveLength(0);
    await expect(store.take(digest('a'))).rejects.toThrow(ClosedError);
    await expect(store.put(digest('c'), record('p-3'), 100)).rejects.toThrow(ClosedError);
  });
});
