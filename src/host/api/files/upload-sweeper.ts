/**
 * The temp files uploads leave behind. An upload is written beside its target as
 * `.<name>.exec-rx-upload-<random>` and moved into place at the end; one cut by a lost connection or a
 * host that died leaves that file. The host removes it at once when it can (best effort), remembers the ones
 * it could not (the executor was gone) and removes them as soon as an environment under that id is
 * connected again (a resumed session or a new generation: it watches the host's environments while it
 * remembers any), and sweeps on a schedule:
 * every {@link SWEEP_EVERY_MS} (10 minutes, on the host's scheduler) it removes such files older than
 * {@link ORPHAN_AGE_MS} (1 hour) in the directories this host uploaded to (since it started).
 */
import type { SchedulerLike, Subscription } from 'rxjs';
import { interval } from 'rxjs';
import type { HostedEnvironments } from '../../hosted-environments';
import type { FileCalls } from './file-calls';
import { FileCalls as Calls } from './file-calls';
import type { FilePath } from './file-path';
import { childOf } from './file-path';
import type { EnvironmentFiles } from './file-calls';

/** How often the sweep runs. */
export const SWEEP_EVERY_MS = 10 * 60_000;
/** How old a temp file must be to be swept (an upload still running keeps writing it). */
export const ORPHAN_AGE_MS = 60 * 60_000;
/** What an upload's temp file is named like. */
export const TEMP_NAME = /^\..*\.exec-rx-upload-[0-9a-f]{16}$/;

/** Per environment id: the directories uploaded to and the temp files left to remove, by native path. */
interface Remembered {
  readonly directories: Map<string, FilePath>;
  readonly orphans: Map<string, FilePath>;
}

/** The sweeper of one host's operator API (see the module's doc). `close()` stops its schedule. */
export class UploadSweeper {
  private readonly remembered = new Map<string, Remembered>();
  private schedule: Subscription | undefined;
  /** Watches the environments while orphans wait for theirs to be back. */
  private watching: Subscription | undefined;
  /** Environment ids whose orphans are being removed now. */
  private readonly removing = new Set<string>();

  constructor(
    private readonly environments: HostedEnvironments,
    private readonly sharedOf: (environmentId: string) => EnvironmentFiles,
    private readonly scheduler: SchedulerLike,
  ) {}

  /** Remembers that an upload went to `directory` of `environmentId` (its temp files are swept there). */
  uploadedTo(environmentId: string, directory: FilePath): void {
    this.of(environmentId).directories.set(directory.native, directory);
    this.schedule ??= interval(SWEEP_EVERY_MS, this.scheduler).subscribe(() => void this.sweep());
  }

  /** Removes `temp` now (best effort); what fails is remembered and removed by a later sweep. */
  async discard(calls: FileCalls, temp: FilePath): Promise<void> {
    try {
      await calls.remove(temp, false, true);
    } catch {
      this.of(calls.environmentId).orphans.set(temp.native, temp);
      this.watchForReturn();
    }
  }

  /** While orphans are remembered: each time an environment holding some is connected, remove them. */
  private watchForReturn(): void {
    this.watching ??= this.environments.environments$.subscribe((list) => {
      for (const hosted of list) {
        if (hosted.state !== 'connected' || hosted.environment === undefined) continue;
        if ((this.remembered.get(hosted.id)?.orphans.size ?? 0) === 0 || this.removing.has(hosted.id)) continue;
        this.removing.add(hosted.id);
        void this.removeOrphans(hosted.id, new Calls(hosted.id, hosted.environment, this.sharedOf(hosted.id))).finally(() => {
          this.removing.delete(hosted.id);
          if (this.orphans === 0) {
            this.watching?.unsubscribe();
            this.watching = undefined;
          }
        });
      }
    });
  }

  /** Removes the remembered orphans of `environmentId` (those that fail stay remembered); never rejects. */
  private async removeOrphans(environmentId: string, calls: FileCalls): Promise<void> {
    const remembered = this.remembered.get(environmentId);
    if (remembered === undefined) return;
    for (const [native, orphan] of remembered.orphans) {
      await calls.remove(orphan, false, true).then(() => remembered.orphans.delete(native), () => undefined);
    }
  }

  /** Temp files waiting for their environment to come back (bookkeeping). */
  get orphans(): number {
    let count = 0;
    for (const remembered of this.remembered.values()) count += remembered.orphans.size;
    return count;
  }

  /** One sweep of every environment this host holds (what the schedule runs; never rejects). */
  async sweep(): Promise<void> {
    await Promise.all([...this.remembered].map(([environmentId, remembered]) => this.sweepOne(environmentId, remembered).catch(() => undefined)));
  }

  /** Stops the schedule. */
  close(): void {
    this.schedule?.unsubscribe();
    this.schedule = undefined;
    this.watching?.unsubscribe();
    this.watching = undefined;
  }

  private async sweepOne(environmentId: string, remembered: Remembered): Promise<void> {
    const environment = this.environments.get(environmentId)?.environment;
    if (environment === undefined) return;
    const calls = new Calls(environmentId, environment, this.sharedOf(environmentId));
    await this.removeOrphans(environmentId, calls);
    const oldest = this.scheduler.now() - ORPHAN_AGE_MS;
    for (const directory of remembered.directories.values()) {
      const entries = await calls.readDirectory(directory).catch(() => []);
      for (const entry of entries.filter((e) => e.isFile && TEMP_NAME.test(e.fileName))) {
        const temp = childOf(directory, entry.fileName);
        const meta = await calls.metadataIfAny(temp).catch(() => undefined);
        if (meta !== undefined && meta.modifiedAtMs > 0 && meta.modifiedAtMs < oldest) await calls.remove(temp, false, true).catch(() => undefined);
      }
    }
  }

  private of(environmentId: string): Remembered {
    let remembered = this.remembered.get(environmentId);
    if (remembered === undefined) {
      remembered = { directories: new Map(), orphans: new Map() };
      this.remembered.set(environmentId, remembered);
    }
    return remembered;
  }
}
