/**
 * The log port's contract (src/store/log-store.ts): every rule a `LogStore` keeps, run against an adapter
 * factory through the port alone. It is the port's definition: an adapter passes it by being added to
 * the list in `./adapters.ts`. Capabilities an adapter lacks (`LogStoreCapabilities`) are declared by it
 * and each rule that needs one is checked as declared instead, never skipped in silence.
 *
 * The rules: a process's events are read back in seq order with their bytes; a reader that starts before
 * the writer is done gets every seq once across replay and live; a reader resuming after a seq gets what
 * follows it; every seq a reader does not get is covered by exactly one `truncated` marker with exact
 * fields (never a silent hole), for a bound, a release, or a hole the executor left; bounds are kept;
 * a writer at a stale epoch is refused (its appends kept out, a StaleEpochError reported); what the store
 * knows of each process follows its life; a durable store takes a process back after a reopen, with the
 * damage a crash leaves cut off; a closed store makes no history.
 */
import type { Observable } from 'rxjs';
import { ClosedError, StaleEpochError } from '../../src/errors';
import type { HistoryInput, OutputHistory } from '../../src/exec/output-history';
import type { ProcessEvent } from '../../src/exec/process-event';
import type { LogEvent } from '../../src/store/log-events';
import type { LogStore, LogStoreCapabilities, LogStoreFailure, ProcessLogReader } from '../../src/store/log-store';
import type { ProcessKey } from '../../src/store/process-meta';
import { closed, exited, outputBytes } from '../exec/event-builders';

/** One adapter under the contract. */
export interface LogStoreAdapter {
  /** Its name in the spec's titles. */
  readonly name: string;
  /** What it declares it can do: the store it opens must say the same. */
  readonly capabilities: LogStoreCapabilities;
  /** The bound the small store of `open({ small: true })` keeps a process's output within, in bytes, and the slack it may go over by (a segment). */
  readonly bound: { readonly bytes: number; readonly slack: number };
  /** A store, empty the first time in a test; `small`: bounded to `bound`. A durable adapter opens the same data again after a close. */
  open(options?: { readonly small?: boolean }): Promise<LogStore>;
  /** Cuts the process's log as a crash mid-write would (a torn last record). Durable adapters only. */
  tear?(key: ProcessKey): Promise<void>;
  /** Makes the store's next writes fail as a full disk would (`writeFailures` only). */
  failWrites?(): void;
  /** Drops what the test made. */
  cleanUp(): Promise<void>;
}

const ENV = 'env-contract';
const key = (processId: string): ProcessKey => ({ environmentId: ENV, processId });
const text = (seq: number): string => `line ${seq} of the contract\n`;
const line = (seq: number, bytes = 0): HistoryInput => outputBytes(seq, Buffer.from(bytes === 0 ? text(seq) : `${seq}:`.padEnd(bytes, 'x')));

/** What a reader got, comparable across adapters: events by seq and text, markers by their fields. */
type Item =
  | { readonly kind: 'output'; readonly seq: number; readonly text: string }
  | { readonly kind: 'exited'; readonly seq: number; readonly exitCode: number }
  | { readonly kind: 'closed'; readonly seq: number }
  | { readonly kind: 'failed'; readonly code: string }
  | { readonly kind: 'truncated'; readonly nextSeq: number; readonly droppedEvents: number; readonly reason?: string; readonly fromSeq?: number; readonly toSeq?: number };

function itemOf(event: ProcessEvent | LogEvent): Item {
  switch (event.type) {
    case 'output':
      return { kind: 'output', seq: event.seq, text: Buffer.from(event.chunk).toString('utf8') };
    case 'exited':
      return { kind: 'exited', seq: event.seq, exitCode: event.exitCode };
    case 'closed':
      return { kind: 'closed', seq: event.seq };
    case 'failed':
      return { kind: 'failed', code: event.error.code };
    case 'truncated':
      return 'reason' in event
        ? { kind: 'truncated', nextSeq: event.nextSeq, droppedEvents: event.droppedEvents, reason: event.reason, fromSeq: event.fromSeq, toSeq: event.toSeq }
        : { kind: 'truncated', nextSeq: event.nextSeq, droppedEvents: event.droppedEvents };
  }
}

/** Everything a reader gets after `afterSeq` now (what the log holds), in order. */
async function readNow(reader: ProcessLogReader, afterSeq = 0): Promise<Item[]> {
  if (reader.pace === 'live') {
    const items: Item[] = [];
    reader.history.eventsAfter$(afterSeq).subscribe((event) => items.push(itemOf(event))).unsubscribe();
    return items;
  }
  const items: Item[] = [];
  let cursor = afterSeq;
  for (;;) {
    const read = await reader.read(cursor, 64 * 1024);
    items.push(...read.events.map(itemOf));
    cursor = read.lastSeq;
    if (read.events.length === 0 || read.ended) return items;
  }
}

/** Follows a reader from `afterSeq` until `until` (a closed seq) arrives; resolves what it got. */
function follow(reader: ProcessLogReader, afterSeq: number, until: number): Promise<Item[]> {
  const items: Item[] = [];
  const done = (): boolean => items.some((item) => 'seq' in item && item.seq >= until);
  if (reader.pace === 'live') {
    return new Promise((resolve) => {
      const subscription = reader.history.eventsAfter$(afterSeq).subscribe({
        next: (event) => items.push(itemOf(event)),
        complete: () => resolve(items),
      });
      if (done()) subscription.unsubscribe();
    });
  }
  return (async () => {
    let cursor = afterSeq;
    while (!done()) {
      const read = reader.readNow(cursor, 64 * 1024) ?? (await reader.read(cursor, 64 * 1024));
      items.push(...read.events.map(itemOf));
      cursor = read.lastSeq;
      if (read.ended) break;
      if (read.caughtUp && !done()) await reader.waitFor(cursor);
    }
    return items;
  })();
}

/**
 * Asserts the no-silent-hole rule over what a reader got after `afterSeq` up to `lastSeq`: each seq is an
 * event once, in order, or inside exactly one marker; each marker's fields are exact (a paced log's
 * markers also say why and which seqs). Returns the markers.
 */
function expectCovered(items: readonly Item[], afterSeq: number, lastSeq: number): Item[] {
  let cursor = afterSeq;
  const markers: Item[] = [];
  for (const item of items) {
    if (item.kind === 'failed') continue;
    if (item.kind === 'truncated') {
      expect(item.nextSeq).toBeGreaterThan(cursor + 1);
      expect(item.droppedEvents).toBe(item.nextSeq - 1 - cursor);
      if (item.reason !== undefined) expect({ fromSeq: item.fromSeq, toSeq: item.toSeq }).toEqual({ fromSeq: cursor + 1, toSeq: item.nextSeq - 1 });
      cursor = item.nextSeq - 1;
      markers.push(item);
      continue;
    }
    expect(item.seq).toBe(cursor + 1);
    cursor = item.seq;
  }
  expect(cursor).toBe(lastSeq);
  return markers;
}

const outputs = (from: number, to: number): Item[] => Array.from({ length: to - from + 1 }, (_, i) => ({ kind: 'output', seq: from + i, text: text(from + i) }));

/** Runs the contract against each adapter. */
export function describeLogStoreContract(adapters: readonly LogStoreAdapter[]): void {
  describe.each(adapters.map((adapter) => [adapter.name, adapter] as const))('the log port: %s', (_name, adapter) => {
    const opened: LogStore[] = [];
    const failures: LogStoreFailure[] = [];
    const open = async (small = false): Promise<LogStore> => {
      const store = await adapter.open({ small });
      store.failures$.subscribe((failure) => failures.push(failure));
      opened.push(store);
      return store;
    };
    const closeAll = async (): Promise<void> => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    };
    /** A new process's history, as the host makes one (its environment claimed at `epoch`). */
    const start = (store: LogStore, processId: string, epoch = 1, argv = ['echo', processId]): OutputHistory => store.histories(ENV, { epoch })(processId, { argv, tty: false });
    const reader = async (store: LogStore, processId: string): Promise<ProcessLogReader> => {
      const found = await store.openReader(key(processId));
      if (found === undefined) throw new Error(`${adapter.name} holds no log of ${processId}`);
      return found;
    };

    afterEach(async () => {
      await closeAll();
      failures.splice(0);
      await adapter.cleanUp();
    });

    it('declares what it can do, and reads as it declares', async () => {
      const store = await open();
      expect(store.capabilities).toEqual(adapter.capabilities);
      start(store, 'p-pace').append(line(1));
      expect((await reader(store, 'p-pace')).pace).toBe(adapter.capabilities.ownPace ? 'own' : 'live');
      expect(store.figures === undefined).toBe(!adapter.capabilities.figures);
      expect(await store.unready()).toBeUndefined();
    });

    it('reads a process back in seq order, with its bytes, its exit and its close', async () => {
      const store = await open();
      const history = start(store, 'p-order');
      for (let seq = 1; seq <= 50; seq += 1) history.append(line(seq));
      history.append(exited(51, 3));
      history.append(closed(52));
      await store.flush();
      expect(await readNow(await reader(store, 'p-order'))).toEqual([...outputs(1, 50), { kind: 'exited', seq: 51, exitCode: 3 }, { kind: 'closed', seq: 52 }]);
      expect(await readNow(await reader(store, 'p-order'), 47)).toEqual([...outputs(48, 50), { kind: 'exited', seq: 51, exitCode: 3 }, { kind: 'closed', seq: 52 }]);
    });

    it('gives a reader that starts mid-stream every seq once, across replay and live', async () => {
      const store = await open();
      const history = start(store, 'p-live');
      for (let seq = 1; seq <= 20; seq += 1) history.append(line(seq));
      const followed = follow(await reader(store, 'p-live'), 0, 41);
      for (let seq = 21; seq <= 40; seq += 1) history.append(line(seq));
      history.append(closed(41));
      const items = await followed;
      expect(items).toEqual([...outputs(1, 40), { kind: 'closed', seq: 41 }]);
      expectCovered(items, 0, 41);
    });

    it('covers every seq it no longer holds with one exact marker when a process outgrows its bound, and keeps the bound', async () => {
      const store = await open(true);
      const history = start(store, 'p-bound');
      const chunk = 256;
      const events = Math.ceil((adapter.bound.bytes * 8) / chunk);
      for (let seq = 1; seq <= events; seq += 1) history.append(line(seq, chunk));
      history.append(closed(events + 1));
      await store.flush();
      const items = await readNow(await reader(store, 'p-bound'));
      const markers = expectCovered(items, 0, events + 1);
      expect(markers).toHaveLength(1);
      expect(history.retainedBytes).toBeLessThanOrEqual(adapter.bound.bytes + adapter.bound.slack);
      const first = items[0];
      if (adapter.capabilities.keepsHead) {
        // The head stays: the first output, then the marker for the middle (the quota's), then the newest.
        expect(first).toMatchObject({ kind: 'output', seq: 1 });
        expect(markers[0]).toMatchObject({ reason: 'quota' });
      } else {
        // The oldest went: the marker first, then the newest.
        expect(first).toMatchObject({ kind: 'truncated' });
      }
      expect(items[items.length - 1]).toEqual({ kind: 'closed', seq: events + 1 });
    });

    it('covers a hole the executor left (seqs that will never come) with one marker, and goes on after it', async () => {
      const store = await open();
      const history = start(store, 'p-hole');
      for (let seq = 1; seq <= 3; seq += 1) history.append(line(seq));
      history.append({ type: 'truncated', nextSeq: 8, droppedEvents: 4, droppedBytes: 0 });
      history.append(line(8));
      history.append(closed(9));
      await store.flush();
      const items = await readNow(await reader(store, 'p-hole'));
      const markers = expectCovered(items, 0, 9);
      expect(markers).toEqual([expect.objectContaining({ kind: 'truncated', nextSeq: 8 })]);
      expect(items.slice(-2)).toEqual([...outputs(8, 8), { kind: 'closed', seq: 9 }]);
      // A paced log keeps what came before the hole; a live history lets it go (its replay could not be contiguous across the hole).
      if (adapter.capabilities.ownPace) expect(items).toEqual([...outputs(1, 3), { kind: 'truncated', nextSeq: 8, droppedEvents: 4, reason: 'evicted', fromSeq: 4, toSeq: 7 }, ...outputs(8, 8), { kind: 'closed', seq: 9 }]);
      else expect(items[0]).toEqual({ kind: 'truncated', nextSeq: 8, droppedEvents: 7 });
    });

    it('reads a released process as it declares: on until its bounds remove it, or one marker for what it held', async () => {
      const store = await open();
      const history = start(store, 'p-released');
      for (let seq = 1; seq <= 5; seq += 1) history.append(line(seq));
      history.append(closed(6));
      const read = await reader(store, 'p-released');
      history.release();
      await store.flush();
      const items = await readNow(read);
      const markers = expectCovered(items, 0, 6);
      if (adapter.capabilities.listsEnded) expect(items).toEqual([...outputs(1, 5), { kind: 'closed', seq: 6 }]);
      else expect(markers).toEqual([expect.objectContaining({ kind: 'truncated', nextSeq: 7, droppedEvents: 6 })]);
    });

    it('refuses a writer whose epoch is stale: its appends are kept out, and a StaleEpochError says so', async () => {
      const store = await open();
      const stale = start(store, 'p-stale', 1);
      stale.append(line(1));
      stale.append(line(2));
      store.histories(ENV, { epoch: 2 });
      stale.append(line(3));
      stale.append(closed(4));
      const late = store.histories(ENV, { epoch: 1 })('p-late', { argv: ['late'], tty: false });
      late.append(line(1));
      await store.flush();
      expect((await readNow(await reader(store, 'p-stale'))).filter((item) => item.kind !== 'truncated')).toEqual(outputs(1, 2));
      expect(await readNow(await reader(store, 'p-late'))).toEqual([]);
      const refused = failures.filter((failure): failure is StaleEpochError => failure instanceof StaleEpochError);
      expect(refused.map((failure) => ({ code: failure.code, environmentId: failure.environmentId, epoch: failure.epoch, currentEpoch: failure.currentEpoch }))).toEqual([
        { code: 'STALE_EPOCH', environmentId: ENV, epoch: 1, currentEpoch: 2 },
        { code: 'STALE_EPOCH', environmentId: ENV, epoch: 1, currentEpoch: 2 },
      ]);
      // The current epoch writes on.
      const current = start(store, 'p-current', 2);
      current.append(line(1));
      await store.flush();
      expect(await readNow(await reader(store, 'p-current'))).toEqual(outputs(1, 1));
    });

    it('knows each process through its life: started, described, exited, closed, noted, released, removed', async () => {
      const store = await open();
      const history = start(store, 'p-life', 1, ['sh', '-c', 'exit 3']);
      const life = async (): Promise<unknown> => {
        await store.metaWritten(key('p-life'));
        const meta = await store.meta(key('p-life'));
        return meta === undefined ? undefined : { state: meta.state, argv: meta.argv, exitCode: meta.exitCode, released: meta.released, startedBy: meta.startedBy };
      };
      expect(await life()).toEqual({ state: 'running', argv: ['sh', '-c', 'exit 3'], exitCode: null, released: false, startedBy: undefined });
      await store.describe(key('p-life'), { argv: ['sh', '-c', 'exit 3 # described'], tty: false });
      await store.noteStartedBy(key('p-life'), 'token-1');
      history.append(exited(1, 3));
      expect(await life()).toEqual({ state: 'exited', argv: ['sh', '-c', 'exit 3 # described'], exitCode: 3, released: false, startedBy: 'token-1' });
      history.append(closed(2));
      expect(await life()).toMatchObject({ state: 'closed' });
      expect((await store.list()).map((meta) => meta.processId)).toContain('p-life');
      history.release();
      expect(await life()).toEqual(adapter.capabilities.listsEnded ? expect.objectContaining({ state: 'closed', released: true }) : undefined);
      await store.remove(key('p-life'));
      expect({ meta: await store.meta(key('p-life')), reader: await store.openReader(key('p-life')) }).toEqual({ meta: undefined, reader: undefined });
    });

    it('keeps nothing of a process that never ran (its start refused, its history discarded): not listed, not taken back, no log', async () => {
      const store = await open();
      const history = start(store, 'p-refused');
      await store.metaWritten(key('p-refused'));
      if (history.discard === undefined) throw new Error(`${adapter.name}'s histories cannot be discarded`);
      history.discard();
      await store.metaWritten(key('p-refused'));
      await store.flush();
      const ids = (metas: readonly { readonly processId: string }[]): string[] => metas.map((meta) => meta.processId);
      expect({
        meta: await store.meta(key('p-refused')),
        listed: ids(await store.list()),
        adoptable: ids(await store.adoptable(ENV)),
        reader: await store.openReader(key('p-refused')),
      }).toEqual({ meta: undefined, listed: [], adoptable: [], reader: undefined });
    });

    it('marks a process whose stream failed on the host failed, or lets go of it, as it declares', async () => {
      const store = await open();
      const history = start(store, 'p-failed');
      history.append(line(1));
      history.append({ type: 'failed', error: new ClosedError('the environment closed') });
      await store.markFailed(key('p-failed'));
      const meta = await store.meta(key('p-failed'));
      expect(meta?.state).toBe(adapter.capabilities.listsEnded ? 'failed' : undefined);
    });

    it('makes no history once closed (ClosedError), and completes its streams', async () => {
      const store = await open();
      const completed: string[] = [];
      const watch = (name: string, stream: Observable<unknown>): void => void stream.subscribe({ complete: () => completed.push(name) });
      watch('failures$', store.failures$);
      watch('syncs$', store.syncs$);
      watch('pressure$', store.pressure$);
      const factory = store.histories(ENV, { epoch: 1 });
      await store.close();
      expect(() => factory('p-after', { argv: ['x'], tty: false })).toThrow(ClosedError);
      expect(completed.sort()).toEqual(['failures$', 'pressure$', 'syncs$']);
    });

    if (adapter.capabilities.ownPace) {
      it('lets a reader far behind read everything at its own pace, with no marker', async () => {
        const store = await open();
        const history = start(store, 'p-pace');
        const events = 2000;
        for (let seq = 1; seq <= events; seq += 1) history.append(line(seq, 512));
        history.append(closed(events + 1));
        await store.flush();
        const items = await readNow(await reader(store, 'p-pace'));
        expect(expectCovered(items, 0, events + 1)).toEqual([]);
      });
    } else {
      it('is read live, as it declares: a reader that comes late gets one marker, then what the history still holds', async () => {
        const store = await open(true);
        const history = start(store, 'p-late-reader');
        const events = Math.ceil((adapter.bound.bytes * 4) / 256);
        for (let seq = 1; seq <= events; seq += 1) history.append(line(seq, 256));
        const items = await readNow(await reader(store, 'p-late-reader'));
        expect(expectCovered(items, 0, events)).toHaveLength(1);
        expect(items[0]?.kind).toBe('truncated');
      });
    }

    if (adapter.capabilities.durable) {
      it('takes a process back after a reopen from its last whole record: a torn write is cut off, and every seq comes once', async () => {
        const tear = adapter.tear;
        if (tear === undefined) throw new Error(`${adapter.name} is durable but gives no way to tear a write`);
        const first = await open();
        const history = start(first, 'p-adopt');
        for (let seq = 1; seq <= 10; seq += 1) history.append(line(seq));
        await first.flush();
        await closeAll();
        await tear(key('p-adopt'));
        const store = await open();
        expect((await store.adoptable(ENV)).map((meta) => [meta.processId, meta.state])).toEqual([['p-adopt', 'unknown']]);
        const lastSeq = await store.adopt(key('p-adopt'), 2);
        expect(lastSeq).toBe(9);
        const taken = store.histories(ENV, { epoch: 2 })('p-adopt', { argv: ['echo', 'p-adopt'], tty: false });
        for (let seq = 10; seq <= 12; seq += 1) taken.append(line(seq));
        taken.append(closed(13));
        await store.flush();
        const items = await readNow(await reader(store, 'p-adopt'));
        expect(items).toEqual([...outputs(1, 12), { kind: 'closed', seq: 13 }]);
        expect(await store.adoptable(ENV)).toEqual([]);
      });

      it('takes a process back again at a newer epoch when the attempt before failed: its log goes on, no writer is refused', async () => {
        const first = await open();
        start(first, 'p-again').append(line(1));
        await first.flush();
        await closeAll();
        const store = await open();
        expect(await store.adopt(key('p-again'), 2)).toBe(1);
        // Until a history continues it, it is still to be taken back.
        expect((await store.adoptable(ENV)).map((meta) => meta.processId)).toEqual(['p-again']);
        // The take-back at epoch 2 failed (its executor's socket dropped); the executor comes back: epoch 3.
        expect(await store.adopt(key('p-again'), 3)).toBe(1);
        const taken = store.histories(ENV, { epoch: 3 })('p-again', { argv: ['echo', 'p-again'], tty: false });
        taken.append(line(2));
        taken.append(closed(3));
        await store.flush();
        expect(await readNow(await reader(store, 'p-again'))).toEqual([...outputs(1, 2), { kind: 'closed', seq: 3 }]);
        expect(failures).toEqual([]);
      });

      it('takes back a process released or failed only after its host closed the store (a stopping host lets go of nothing)', async () => {
        const first = await open();
        const feeder = start(first, 'p-feeder', 1, []);
        feeder.append(line(1));
        const command = start(first, 'p-command');
        command.append(line(1));
        await first.flush();
        await first.close();
        // What a host's stop does after its logs closed: it stops a stdin feeder (released), its processes fail.
        feeder.release();
        command.append({ type: 'failed', error: new ClosedError('exec-server environment manager closed') });
        await closeAll();
        const store = await open();
        expect((await store.adoptable(ENV)).map((meta) => [meta.processId, meta.state, meta.released]).sort()).toEqual([
          ['p-command', 'unknown', false],
          ['p-feeder', 'unknown', false],
        ]);
      });

      it('marks a process it could not take back lost, with why; it stays readable and is not adoptable', async () => {
        const first = await open();
        start(first, 'p-lost').append(line(1));
        await first.flush();
        await closeAll();
        const store = await open();
        await store.markLost(key('p-lost'), 'its executor no longer had it');
        expect(await store.meta(key('p-lost'))).toMatchObject({ state: 'lost', lostReason: 'its executor no longer had it' });
        expect(await store.adoptable(ENV)).toEqual([]);
        expect(await readNow(await reader(store, 'p-lost'))).toEqual(outputs(1, 1));
      });
    } else {
      it('is not durable, as it declares: nothing of before is adoptable, and adopting finds nothing', async () => {
        const store = await open();
        start(store, 'p-gone').append(line(1));
        expect(await store.adoptable(ENV)).toEqual([]);
        expect(await store.adopt(key('p-gone'), 2)).toBeUndefined();
      });
    }

    if (adapter.capabilities.writeFailures) {
      it('fails a log the disk refuses alone, with LOG_WRITE_FAILED: its reader gets a writeFailed marker, then the failure', async () => {
        const failWrites = adapter.failWrites;
        if (failWrites === undefined) throw new Error(`${adapter.name} declares write failures but gives no way to cause one`);
        const store = await open();
        const history = start(store, 'p-full');
        history.append(line(1));
        await store.flush();
        failWrites();
        history.append(line(2));
        await store.flush();
        history.append(closed(3));
        const items = await readNow(await reader(store, 'p-full'));
        expect(failures.map((failure) => failure.code)).toContain('LOG_WRITE_FAILED');
        expect(items.filter((item) => item.kind === 'truncated' || item.kind === 'failed')).toEqual([
          expect.objectContaining({ kind: 'truncated', reason: 'writeFailed' }),
          { kind: 'failed', code: 'LOG_WRITE_FAILED' },
        ]);
      });
    } else {
      it('has no write that can fail, as it declares: a long stream reports no failure', async () => {
        const store = await open(true);
        const history = start(store, 'p-no-failure');
        for (let seq = 1; seq <= 500; seq += 1) history.append(line(seq, 1024));
        history.append(closed(501));
        await store.flush();
        expect(failures).toEqual([]);
      });
    }
  });
}
