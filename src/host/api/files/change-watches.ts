/**
 * The change stream's pollers. 0.171.0 has no watch of an existing directory (only `fs/watchMissing`, for
 * paths that do not exist yet), so the host polls and diffs: every {@link POLL_EVERY_MS} (2 s, on the host's
 * scheduler) one `fs/readDirectory` of the directory and one `fs/getMetadata` per entry (at most
 * {@link MAX_WATCHED_ENTRIES}, the first by name), each in the environment's fair queue. So one watched
 * directory of N entries costs 1 + N requests on the executor's request line every 2 s, whoever watches:
 * there is ONE poller per (environment, directory), shared by all its subscribers, started by the first
 * and stopped when the last one leaves. A poll that is still running when the next is due is not doubled.
 *
 * The first poll takes the directory as it is (no events); each later one reports what it finds
 * `created`, `changed` (size, mtime or type differ) and `removed` (with the entry as last seen).
 *
 * Each poll looks the environment up by id at that moment (`HostedEnvironments.get`), never keeping the
 * object it started with: an executor that came back with a new session (a new generation, another
 * `Environment` object) is polled from its next tick on; while none is connected under that id the poll
 * is skipped. A poll that failed (the executor was away) changes nothing: the next one diffs against the
 * last snapshot taken.
 */
import type { SchedulerLike, Subscription } from 'rxjs';
import { interval } from 'rxjs';
import type { HostedEnvironments } from '../../hosted-environments';
import type { FileChange, FileEntry } from '../../../wire/files-api';
import type { EnvironmentFiles } from './file-calls';
import { FileCalls } from './file-calls';
import { entryOf } from './file-entry';
import type { FilePath } from './file-path';
import { childOf } from './file-path';

/** How often a watched directory is polled. */
export const POLL_EVERY_MS = 2_000;
/** The most entries of one directory a poller stats (the first by name). */
export const MAX_WATCHED_ENTRIES = 1_000;

/** Hears a watched directory's changes. */
export type ChangeListener = (change: FileChange) => void;

/** The entries of `directory` now, by name (see the module's doc). */
async function snapshotOf(calls: FileCalls, directory: FilePath): Promise<Map<string, FileEntry>> {
  const names = (await calls.readDirectory(directory)).map((entry) => entry.fileName).sort().slice(0, MAX_WATCHED_ENTRIES);
  const entries = await Promise.all(
    names.map(async (name) => {
      const path = childOf(directory, name);
      const meta = await calls.metadataIfAny(path).catch(() => undefined);
      return meta === undefined ? undefined : entryOf(path, meta);
    }),
  );
  return new Map(entries.flatMap((entry) => (entry === undefined ? [] : [[entry.name, entry] as const])));
}

/** What changed from `before` to `after`. */
export function diffOf(before: ReadonlyMap<string, FileEntry>, after: ReadonlyMap<string, FileEntry>): FileChange[] {
  const changes: FileChange[] = [];
  for (const [name, entry] of after) {
    const was = before.get(name);
    if (was === undefined) changes.push({ kind: 'created', entry });
    else if (was.size !== entry.size || was.modifiedAt !== entry.modifiedAt || was.type !== entry.type) changes.push({ kind: 'changed', entry });
  }
  for (const [name, entry] of before) if (!after.has(name)) changes.push({ kind: 'removed', entry });
  return changes;
}

/** One directory's poller and its subscribers. */
class Poller {
  readonly listeners = new Set<ChangeListener>();
  /** Settles once the first poll took the directory as it is (or failed). */
  readonly ready: Promise<void>;
  private snapshot: Map<string, FileEntry> | undefined;
  private busy = false;
  private readonly timer: Subscription;

  constructor(
    /** This directory's calls on the environment as it is now (`undefined`: none under that id now). */
    private readonly callsNow: () => FileCalls | undefined,
    private readonly directory: FilePath,
    scheduler: SchedulerLike,
  ) {
    this.timer = interval(POLL_EVERY_MS, scheduler).subscribe(() => void this.poll());
    this.ready = this.poll();
  }

  stop(): void {
    this.timer.unsubscribe();
  }

  private async poll(): Promise<void> {
    if (this.busy) return;
    const calls = this.callsNow();
    if (calls === undefined) return;
    this.busy = true;
    try {
      const next = await snapshotOf(calls, this.directory);
      const changes = this.snapshot === undefined ? [] : diffOf(this.snapshot, next);
      this.snapshot = next;
      for (const change of changes) for (const listener of this.listeners) listener(change);
    } catch {
      // The directory went, or the executor is away: the next poll tries again.
    } finally {
      this.busy = false;
    }
  }
}

/** The host's pollers, by environment and directory (see the module's doc). */
export class ChangeWatches {
  private readonly pollers = new Map<string, Poller>();

  constructor(
    /** Where each poll finds the environment it polls (by id, at that moment). */
    private readonly environments: HostedEnvironments,
    private readonly sharedOf: (environmentId: string) => EnvironmentFiles,
    private readonly scheduler: SchedulerLike,
  ) {}

  /** Pollers running now (bookkeeping: one per watched directory). */
  get size(): number {
    return this.pollers.size;
  }

  /**
   * Subscribes `listener` to `directory` of the environment; returns what unsubscribes it (idempotent) and
   * what settles once the directory's first poll is done (from then on every change is reported).
   */
  watch(environmentId: string, directory: FilePath, listener: ChangeListener): { readonly stop: () => void; readonly ready: Promise<void> } {
    const key = `${environmentId}\0${directory.native}`;
    let poller = this.pollers.get(key);
    if (poller === undefined) {
      const callsNow = (): FileCalls | undefined => {
        const environment = this.environments.get(environmentId)?.environment;
        return environment === undefined ? undefined : new FileCalls(environmentId, environment, this.sharedOf(environmentId));
      };
      poller = new Poller(callsNow, directory, this.scheduler);
      this.pollers.set(key, poller);
    }
    const watched = poller;
    watched.listeners.add(listener);
    const stop = (): void => {
      watched.listeners.delete(listener);
      if (watched.listeners.size === 0 && this.pollers.get(key) === watched) {
        watched.stop();
        this.pollers.delete(key);
      }
    };
    return { stop, ready: watched.ready };
  }

  /** Stops every poller (the host stops). */
  close(): void {
    for (const poller of this.pollers.values()) poller.stop();
    this.pollers.clear();
  }
}
