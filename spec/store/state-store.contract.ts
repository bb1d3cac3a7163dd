/**
 * The state port's contract (src/store/state-store.ts): every rule a `StateStore` keeps, run against an
 * adapter factory. It is the port's definition: an adapter passes it by being added to the list in
 * `./adapters.ts`. What only some adapters can do is a capability each declares; a rule that needs one
 * it lacks is checked as the adapter declares instead (never skipped in silence).
 *
 * The rules: what is written is read back (made token, registrations, sessions, owners, keyed starts,
 * stdin records), as copies; writes of one record land in order; each claim is the next epoch and every
 * write for an environment at an older one is refused with StaleEpochError, changing nothing; a claim
 * for an upgrade signed before the owner's (within the window) is refused with StaleClaimError; keyed
 * starts are bounded, the oldest going first; forgetting an environment forgets what is its own; a
 * closed store refuses every call; a durable store keeps all of it across a reopen, and reads a damaged
 * record as absent (its crash points); a store that is not durable remembers nothing once made again.
 */
import type { SchedulerLike } from 'rxjs';
import { VirtualTimeScheduler } from 'rxjs';
import { ClosedError, StaleClaimError, StaleEpochError } from '../../src/errors';
import type { NewStartRecord, StateStore } from '../../src/store/state-store';
import { STALE_UPGRADE_WINDOW_MS } from '../../src/store/state-store';
import type { StdinRecord } from '../../src/store/stdin-record';

/** What a state adapter can do, as its contract entry declares it. */
export interface StateStoreCapabilities {
  /** What it holds survives a reopen. */
  readonly durable: boolean;
  /** It can be damaged like a crash would (a torn or corrupt record), and reads the damage as absent. */
  readonly crashPoints: boolean;
}

/** One adapter under the contract. */
export interface StateStoreAdapter {
  /** Its name in the spec's titles. */
  readonly name: string;
  readonly capabilities: StateStoreCapabilities;
  /** A store, empty the first time in a test (a fresh data dir, a fresh key prefix), keeping at most `maxStarts` keyed starts. */
  open(options: { readonly scheduler: SchedulerLike; readonly maxStarts?: number }): Promise<StateStore>;
  /** Damages environment `id`'s record as a crash would (crash points only). */
  damage?(id: string): Promise<void>;
  /** Lines the store reported while opening (crash points only). */
  readonly reported?: () => readonly string[];
  /** Drops what the test made. */
  cleanUp(): Promise<void>;
}

const DIGEST = (n: number): string => n.toString(16).padStart(64, '0');
const start = (n: number, environmentId = 'env-1'): NewStartRecord => ({ digest: DIGEST(n), environmentId, processId: `process-${n}`, fingerprint: `fingerprint-${n}` });
const stdin = (next: number): StdinRecord => ({ target: 'fifo', writerProcessId: 'feeder-1', nextWriteId: next, endWriteId: null, ttyPath: null, writes: [{ writeId: `w-${next}`, firstWriteId: next - 1, count: 1 }] });
const KEY = { environmentId: 'env-1', processId: 'p-1' };

/** Runs the contract against each adapter. */
export function describeStateStoreContract(adapters: readonly StateStoreAdapter[]): void {
  describe.each(adapters.map((adapter) => [adapter.name, adapter] as const))('the state port: %s', (_name, adapter) => {
    let clock: VirtualTimeScheduler;
    const opened: StateStore[] = [];
    const open = async (maxStarts?: number): Promise<StateStore> => {
      const store = await adapter.open({ scheduler: clock, ...(maxStarts === undefined ? {} : { maxStarts }) });
      opened.push(store);
      return store;
    };
    /** Closes what is open (the next `open` of a durable adapter reads it back). */
    const closeAll = async (): Promise<void> => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    };
    const advance = (ms: number): void => {
      clock.schedule(() => undefined, ms);
      clock.flush();
    };

    beforeEach(() => {
      clock = new VirtualTimeScheduler();
    });
    afterEach(async () => {
      await closeAll();
      await adapter.cleanUp();
    });

    it('reads back the made token, registrations and sessions it was given, sorted by id, as copies', async () => {
      const store = await open();
      expect(await store.madeTokenDigest()).toBeUndefined();
      await store.setMadeTokenDigest('a'.repeat(64));
      const registration = { id: 'env-b', registrationId: 'reg-1', accessKeyId: 'AKID1', tokenDigest: 'b'.repeat(64) };
      await store.setRegistration(registration);
      await store.setRegistration({ id: 'env-a', registrationId: 'reg-2', accessKeyId: 'AKID1', tokenDigest: 'c'.repeat(64) });
      await store.setRegistration({ ...registration, registrationId: 'reg-3' });
      advance(5);
      await store.setSession('env-b', { sessionId: 's-b', accessKeyId: 'AKID1' }, 0);
      await store.setSession('env-a', { sessionId: 's-a', accessKeyId: 'AKID2' }, 0);
      expect(await store.madeTokenDigest()).toBe('a'.repeat(64));
      expect((await store.registrations()).map((r) => [r.id, r.registrationId])).toEqual([
        ['env-a', 'reg-2'],
        ['env-b', 'reg-3'],
      ]);
      expect(await store.environments()).toEqual([
        { id: 'env-a', sessionId: 's-a', accessKeyId: 'AKID2', updatedAt: 5 },
        { id: 'env-b', sessionId: 's-b', accessKeyId: 'AKID1', updatedAt: 5 },
      ]);
      expect(await store.environment('env-c')).toBeUndefined();
      const writes = [...stdin(3).writes];
      await store.setStdin(KEY, { ...stdin(3), writes }, 0);
      writes[0] = { writeId: 'changed', firstWriteId: 1, count: 1 };
      expect(await store.stdin(KEY)).toEqual(stdin(3));
    });

    it('writes nothing new for the same session again: its time stays', async () => {
      const store = await open();
      await store.setSession('env-1', { sessionId: 's-1', accessKeyId: 'AKID1' }, 0);
      advance(100);
      await store.setSession('env-1', { sessionId: 's-1', accessKeyId: 'AKID1' }, 0);
      expect(await store.environment('env-1')).toEqual({ id: 'env-1', sessionId: 's-1', accessKeyId: 'AKID1', updatedAt: 0 });
      await store.setSession('env-1', { sessionId: 's-2', accessKeyId: 'AKID1' }, 0);
      expect(await store.environment('env-1')).toEqual({ id: 'env-1', sessionId: 's-2', accessKeyId: 'AKID1', updatedAt: 100 });
    });

    it('claims the next epoch each time, per environment, naming the owner', async () => {
      const store = await open();
      expect(await store.owner('env-1')).toBeUndefined();
      expect(await store.claim('env-1', 'host-a')).toBe(1);
      expect(await store.claim('env-2', 'host-a')).toBe(1);
      expect(await store.claim('env-1', 'host-b')).toBe(2);
      expect(await store.owner('env-1')).toEqual({ owner: 'host-b', epoch: 2 });
      expect(await store.owner('env-2')).toEqual({ owner: 'host-a', epoch: 1 });
    });

    it("refuses a claim whose upgrade was signed before the owner's, within the window, with StaleClaimError, keeping nothing", async () => {
      const store = await open();
      const at = Date.UTC(2026, 11, 6, 12, 0, 0);
      expect(await store.claim('env-1', 'host-a', { signedAt: at })).toBe(1);
      expect(await store.owner('env-1')).toEqual({ owner: 'host-a', epoch: 1, signedAt: at });
      const error: unknown = await store.claim('env-1', 'host-b', { signedAt: at - 1_000 }).then(() => undefined, (rejected: unknown) => rejected);
      expect(error).toBeInstanceOf(StaleClaimError);
      expect(error).toMatchObject({
        code: 'STALE_CLAIM',
        environmentId: 'env-1',
        signedAt: at - 1_000,
        ownerSignedAt: at,
        currentEpoch: 1,
        message: 'environment env-1: a claim for an upgrade signed at 2026-12-06T11:59:59.000Z was refused: the owner at epoch 1 claimed it on one signed at 2026-12-06T12:00:00.000Z',
      });
      expect(await store.owner('env-1')).toEqual({ owner: 'host-a', epoch: 1, signedAt: at });
      // The same second (x-amz-date's unit), a later one, one past the window (a clock that stepped back), and a claim that says nothing all pass.
      expect(await store.claim('env-1', 'host-b', { signedAt: at })).toBe(2);
      expect(await store.claim('env-1', 'host-a', { signedAt: at + 1_000 })).toBe(3);
      expect(await store.claim('env-1', 'host-b', { signedAt: at + 1_000 - STALE_UPGRADE_WINDOW_MS - 1 })).toBe(4);
      expect(await store.claim('env-1', 'host-a')).toBe(5);
      expect(await store.owner('env-1')).toEqual({ owner: 'host-a', epoch: 5 });
      expect(await store.claim('env-1', 'host-b', { signedAt: 0 })).toBe(6);
    });

    it('refuses every write of an environment at a stale epoch with StaleEpochError, keeping nothing of it', async () => {
      const store = await open();
      await store.claim('env-1', 'host-a');
      await store.setSession('env-1', { sessionId: 's-1', accessKeyId: 'AKID1' }, 1);
      await store.recordStart(start(1), 1);
      await store.setStdin(KEY, stdin(2), 1);
      await store.claim('env-1', 'host-b');
      const stale = [
        store.setSession('env-1', { sessionId: 's-stale', accessKeyId: 'AKID1' }, 1),
        store.recordStart(start(2), 1),
        store.markStarted(DIGEST(1), 1),
        store.forgetStart(DIGEST(1), 1),
        store.setStdin(KEY, stdin(9), 1),
        store.forgetStdin(KEY, 1),
      ];
      for (const write of stale) {
        const error: unknown = await write.then(() => undefined, (rejected: unknown) => rejected);
        expect(error).toBeInstanceOf(StaleEpochError);
        expect(error).toMatchObject({ code: 'STALE_EPOCH', environmentId: 'env-1', epoch: 1, currentEpoch: 2, message: 'environment env-1 is owned at epoch 2: a write of epoch 1 was refused' });
      }
      expect(await store.environment('env-1')).toMatchObject({ sessionId: 's-1' });
      expect(await store.start(DIGEST(1))).toMatchObject({ state: 'sent' });
      expect(await store.start(DIGEST(2))).toBeUndefined();
      expect(await store.stdin(KEY)).toEqual(stdin(2));
      // The owner's epoch passes; another environment's writes do not care.
      await store.markStarted(DIGEST(1), 2);
      expect(await store.start(DIGEST(1))).toMatchObject({ state: 'started' });
      await store.recordStart(start(3, 'env-2'), 0);
      expect(await store.start(DIGEST(3))).toMatchObject({ environmentId: 'env-2', state: 'sent' });
    });

    it('keeps a keyed start from sent to started until forgotten, and at most its bound, the oldest going first', async () => {
      const store = await open(2);
      await store.recordStart(start(1), 0);
      expect(await store.start(DIGEST(1))).toEqual({ ...start(1), state: 'sent', recordedAt: 0 });
      await store.markStarted(DIGEST(1), 0);
      expect(await store.start(DIGEST(1))).toEqual({ ...start(1), state: 'started', recordedAt: 0 });
      await store.markStarted(DIGEST(7), 0); // not kept: nothing happens
      expect(await store.start(DIGEST(7))).toBeUndefined();
      for (const n of [2, 3]) {
        advance(10);
        await store.recordStart(start(n), 0);
      }
      expect(await Promise.all([1, 2, 3].map((n) => store.start(DIGEST(n))))).toEqual([undefined, { ...start(2), state: 'sent', recordedAt: 10 }, { ...start(3), state: 'sent', recordedAt: 20 }]);
      // Recorded again, a start is the newest: the next one pushes the other out.
      await store.recordStart(start(2), 0);
      await store.recordStart(start(4), 0);
      expect((await Promise.all([2, 3, 4].map((n) => store.start(DIGEST(n))))).map((record) => record?.processId)).toEqual(['process-2', undefined, 'process-4']);
      await store.forgetStart(DIGEST(2), 0);
      expect(await store.start(DIGEST(2))).toBeUndefined();
    });

    it("replaces a process's stdin record in order, and forgets it, leaving other processes' alone", async () => {
      const store = await open();
      const other = { environmentId: 'env-1', processId: 'p-2' };
      await Promise.all([store.setStdin(KEY, stdin(2), 0), store.setStdin(KEY, stdin(5), 0), store.setStdin(other, stdin(7), 0)]);
      expect(await store.stdin(KEY)).toEqual(stdin(5));
      await store.forgetStdin(KEY, 0);
      expect(await store.stdin(KEY)).toBeUndefined();
      expect(await store.stdin(other)).toEqual(stdin(7));
    });

    it("forgets an environment's session, registration, owner and stdin records, and nothing of another's", async () => {
      const store = await open();
      for (const id of ['env-1', 'env-2']) {
        await store.setRegistration({ id, registrationId: `reg-${id}`, accessKeyId: 'AKID1', tokenDigest: 'd'.repeat(64) });
        await store.claim(id, 'host-a');
        await store.setSession(id, { sessionId: `s-${id}`, accessKeyId: 'AKID1' }, 1);
        await store.setStdin({ environmentId: id, processId: 'p-1' }, stdin(2), 1);
      }
      await store.forget('env-1');
      expect(await store.environment('env-1')).toBeUndefined();
      expect(await store.owner('env-1')).toBeUndefined();
      expect(await store.stdin({ environmentId: 'env-1', processId: 'p-1' })).toBeUndefined();
      expect((await store.registrations()).map((r) => r.id)).toEqual(['env-2']);
      expect(await store.environment('env-2')).toMatchObject({ sessionId: 's-env-2' });
      expect(await store.stdin({ environmentId: 'env-2', processId: 'p-1' })).toEqual(stdin(2));
    });

    it('refuses every call once closed, with ClosedError; close again is a no-op', async () => {
      const store = await open();
      await store.close();
      await store.close();
      const calls = [store.madeTokenDigest(), store.registrations(), store.environment('env-1'), store.claim('env-1', 'host-a'), store.recordStart(start(1), 0), store.setStdin(KEY, stdin(2), 0)];
      for (const call of calls) await expect(call).rejects.toBeInstanceOf(ClosedError);
      await expect(store.flush()).resolves.toBeUndefined();
    });

    if (adapter.capabilities.durable) {
      it('is durable: a reopen reads back everything, and the next claim goes on from the last epoch', async () => {
        const store = await open();
        await store.setMadeTokenDigest('e'.repeat(64));
        await store.setRegistration({ id: 'env-1', registrationId: 'reg-1', accessKeyId: 'AKID1', tokenDigest: 'f'.repeat(64) });
        await store.claim('env-1', 'host-a');
        await store.claim('env-1', 'host-a');
        await store.setSession('env-1', { sessionId: 's-1', accessKeyId: 'AKID1' }, 2);
        await store.recordStart(start(1), 2);
        await store.markStarted(DIGEST(1), 2);
        await store.setStdin(KEY, stdin(4), 2);
        await closeAll();
        const again = await open();
        expect(await again.madeTokenDigest()).toBe('e'.repeat(64));
        expect(await again.registrations()).toEqual([{ id: 'env-1', registrationId: 'reg-1', accessKeyId: 'AKID1', tokenDigest: 'f'.repeat(64) }]);
        expect(await again.environment('env-1')).toEqual({ id: 'env-1', sessionId: 's-1', accessKeyId: 'AKID1', updatedAt: 0 });
        expect(await again.owner('env-1')).toEqual({ owner: 'host-a', epoch: 2 });
        expect(await again.start(DIGEST(1))).toEqual({ ...start(1), state: 'started', recordedAt: 0 });
        expect(await again.stdin(KEY)).toEqual(stdin(4));
        // The stale epoch stays stale across the reopen.
        await expect(again.setSession('env-1', { sessionId: 's-old', accessKeyId: 'AKID1' }, 1)).rejects.toBeInstanceOf(StaleEpochError);
        expect(await again.claim('env-1', 'host-b')).toBe(3);
      });
    } else {
      it('is not durable, as it declares: a store made again remembers nothing', async () => {
        const store = await open();
        await store.claim('env-1', 'host-a');
        await store.setSession('env-1', { sessionId: 's-1', accessKeyId: 'AKID1' }, 1);
        await closeAll();
        const again = await open();
        expect({ environments: await again.environments(), owner: await again.owner('env-1'), registrations: await again.registrations() }).toEqual({ environments: [], owner: undefined, registrations: [] });
      });
    }

    if (adapter.capabilities.crashPoints) {
      it('reads a damaged record as absent and says so once, keeping the others', async () => {
        const damage = adapter.damage;
        const reported = adapter.reported;
        if (damage === undefined || reported === undefined) throw new Error(`${adapter.name} declares crash points but gives no way to cause one`);
        const store = await open();
        for (const id of ['env-1', 'env-2']) await store.setSession(id, { sessionId: `s-${id}`, accessKeyId: 'AKID1' }, 0);
        await closeAll();
        await damage('env-1');
        const again = await open();
        expect(await again.environment('env-1')).toBeUndefined();
        expect(await again.environment('env-2')).toMatchObject({ sessionId: 's-env-2' });
        expect(reported().filter((line) => line.includes('env-1'))).toHaveLength(1);
      });
    } else {
      it('has no crash points, as it declares: nothing it holds is ever half written (each call settles whole)', async () => {
        const store = await open();
        const writes = [store.setSession('env-1', { sessionId: 's-1', accessKeyId: 'AKID1' }, 0), store.setSession('env-1', { sessionId: 's-2', accessKeyId: 'AKID1' }, 0)];
        await Promise.all(writes);
        expect(await store.environment('env-1')).toMatchObject({ sessionId: 's-2' });
      });
    }
  });
}
