/**
 * Taking an executor's session back after a host restart, or from another replica: once the executor
 * answered `initialize` on the socket, the environment is claimed, and the processes the log store holds
 * for it (found `unknown`: running when the host stopped; or running under an older epoch) are adopted from
 * their logs' last seqs, with the stdin each had kept in the state store, or marked `lost` with why; none
 * is left neither. Everything goes through the two store ports.
 */
import type WebSocket from 'ws';
import type { EnvironmentManagerOptions } from '../environment/environment-manager-options';
import { EnvironmentManager } from '../environment/environment-manager';
import type { ExecProcess } from '../exec/exec-process';
import type { HistoryFactory } from '../exec/output-history';
import type { LogStore } from '../store/log-store';
import type { ProcessKey, ProcessMeta } from '../store/process-meta';
import type { StateStore } from '../store/state-store';
import type { StdinRecord } from '../store/stdin-record';
import type { HostLogger } from './host-logger';
import { messageOf, OutputLogReadError } from '../errors';
import { isTransientErrno } from '../store/errno';
import { ClaimedHistories } from './claimed-histories';
import type { AdoptedProcessRecord, LostProcess } from '../environment/session-adoption';
import type { AdmittedSession } from '../session/exec-client-options';

/** A process a restarted host took back with the stdin it had kept (the operator API writes it again). */
export interface TakenBackStdin {
  /** The process taken back. */
  readonly process: ExecProcess;
  /** Its stdin as kept before the restart. */
  readonly record: StdinRecord;
  /** The stdin FIFO's feeder, taken back too (a `fifo` record); undefined for a pty, or when it was lost. */
  readonly feeder: ExecProcess | undefined;
}

/** What a take-back works with. */
export interface TakeBackParts {
  readonly logs: LogStore;
  readonly state: StateStore;
  readonly log: HostLogger;
  readonly managerOptions: EnvironmentManagerOptions;
  /** The history factory of an environment's generation written at `epoch`. */
  readonly historiesOf: (environmentId: string, epoch: number) => HistoryFactory;
}


/** The take-backs of one host (see the module's doc), and the stdin of the processes it took back while they run. */
export class TakeBacks {
  /** The stdin of processes taken back, by `environmentId\u0000processId`, while they run. */
  private readonly stdins = new Map<string, TakenBackStdin>();
  private unaccountedCount = 0;

  constructor(private readonly parts: TakeBackParts) {}

  /** The stdin a process taken back had (see {@link TakenBackStdin}), while it runs. */
  stdinOf(environmentId: string, processId: string): TakenBackStdin | undefined {
    return this.stdins.get(`${environmentId}\u0000${processId}`);
  }

  /** The first session of `id` since the start is a new one: every process of before is `lost`, saying why. Never rejects. */
  async loseAll(id: string, epoch: number, reason: string): Promise<void> {
    const { logs } = this.parts;
    const found = await logs.adoptable(id).catch(() => []);
    for (const meta of found) await this.lose({ environmentId: id, processId: meta.processId }, epoch, reason);
  }

  /**
   * Takes the executor's session back (`EnvironmentManager.adoptAcceptedWebsocket`). The environment is
   * claimed (`claim`, which resolves with the new epoch) only once the executor answered `initialize` on
   * this socket: a socket its executor gave up on never answers, so it never claims. Then each process the
   * store holds for the environment is adopted from its log's last seq at that epoch, or marked `lost` with
   * why (its log is gone or could not be reopened, the executor no longer had the session or the process).
   * After it, every process of the environment is accounted for: one the store still lists as to be taken
   * back is a violation, counted ({@link unaccounted}), logged and marked `lost`. A failed attempt leaves
   * the adopted logs adoptable for the executor's next socket. Resolves with the manager; rejects with the
   * adoption's error (the claim's: StaleClaimError, the store's).
   */
  async run(id: string, socket: WebSocket, sessionId: string, claim: () => Promise<number>): Promise<EnvironmentManager> {
    const { log } = this.parts;
    const claimed = new ClaimedHistories(id, (epoch) => this.parts.historiesOf(id, epoch));
    let stdins = new Map<string, StdinRecord>();
    // The processes this host found lost (the store's side), beside those the executor no longer had.
    const lostHere: LostProcess[] = [];
    const records = async (session: AdmittedSession): Promise<readonly AdoptedProcessRecord[]> => {
      const epoch = await claim();
      claimed.claim(epoch);
      if (!session.resumed) {
        // Every process of the session is lost with it: the manager says so of each record given (below, as
        // `taken.lost`), and stdin feeders are told apart from the processes they feed by their records.
        const gone = new Map((await this.parts.logs.adoptable(id).catch(() => [])).map((meta) => [meta.processId, { lastSeq: 0, meta }]));
        stdins = await this.readStdins(id, [...gone.keys()]);
        return recordsOf(gone, stdins);
      }
      const adopted = await this.adopt(id, epoch, lostHere);
      stdins = await this.readStdins(id, [...adopted.keys()]);
      return recordsOf(adopted, stdins);
    };
    const options = { ...this.parts.managerOptions, outputHistory: claimed.factory };
    const taken = await EnvironmentManager.adoptAcceptedWebsocket(id, socket, { sessionId, processes: records }, options);
    const epoch = claimed.epoch;
    this.keepStdins(id, taken.processes, stdins);
    this.resumeSizedTtys(taken.manager, taken.processes, stdins);
    for (const lost of taken.lost) await this.lose({ environmentId: id, processId: lost.processId }, epoch, lost.reason);
    await this.account(id, epoch, new Set(taken.processes.map((process) => process.processId)), lostHere);
    const allLost = [...lostHere, ...taken.lost];
    const how = taken.resumed ? `session ${sessionId} taken back` : `session ${sessionId} is gone, a new one was made`;
    const helpers = helperIds(stdins);
    // Helpers (stdin feeders) are taken back with their process, and not counted.
    const count = taken.processes.filter((process) => !helpers.has(process.processId)).length;
    const lostCount = allLost.filter((lost) => !helpers.has(lost.processId)).length;
    const processes = `${count} process${count === 1 ? '' : 'es'}`;
    log.info({ environmentId: id, resumed: taken.resumed, adopted: count, lost: lostCount, epoch }, `environment ${id}: ${how}: ${processes} adopted, ${lostCount} lost`);
    for (const lost of allLost) log.warn({ environmentId: id, processId: lost.processId }, `environment ${id}: process ${lost.processId} lost: ${lost.reason}`);
    return taken.manager;
  }

  /** Processes found neither adopted nor lost after a take-back (an invariant's violations; the metrics read it). */
  get unaccounted(): number {
    return this.unaccountedCount;
  }

  /**
   * After a take-back at `epoch`: a process the store still lists as to be taken back was neither adopted
   * nor lost. That breaks the promise (its readers would wait for an end that never comes): it is counted,
   * logged, and marked `lost` so that its readers get an end. Never rejects.
   */
  private async account(id: string, epoch: number, adopted: ReadonlySet<string>, lost: LostProcess[]): Promise<void> {
    // An adopted one may still be listed while the store writes its new epoch: it is accounted for.
    const left = (await this.parts.logs.adoptable(id).catch(() => [])).filter((meta) => !adopted.has(meta.processId));
    for (const meta of left) {
      this.unaccountedCount++;
      const line = `environment ${id}: process ${meta.processId} was neither adopted nor lost by the take-back at epoch ${epoch}`;
      this.parts.log.error({ environmentId: id, processId: meta.processId, epoch }, line);
      const reason = `the take-back at epoch ${epoch} could not account for it`;
      await this.lose({ environmentId: id, processId: meta.processId }, epoch, reason);
      lost.push({ processId: meta.processId, reason });
    }
  }

  /**
   * The processes of `id` adopted at `epoch` (again, after a failed attempt), by id, with their logs' last
   * seqs and what the store listed of them; each that cannot be is `lost` with why. Rejects when the store
   * could not be read for a while (a transient error: the next socket tries again, nothing is lost for it).
   */
  private async adopt(id: string, epoch: number, lost: LostProcess[]): Promise<Map<string, AdoptedLog>> {
    const { logs } = this.parts;
    // What a failed attempt adopted is adoptable still: the store, not this host, knows what is to be taken back.
    const adopted = new Map<string, AdoptedLog>();
    for (const meta of await logs.adoptable(id)) {
      const key = { environmentId: id, processId: meta.processId };
      let lastSeq: number | undefined;
      try {
        lastSeq = await logs.adopt(key, epoch);
      } catch (error: unknown) {
        if (error instanceof OutputLogReadError && isTransientErrno(error.errno)) throw error;
        const reason = `its output log could not be reopened: ${messageOf(error)}`;
        await this.lose(key, epoch, reason);
        lost.push({ processId: meta.processId, reason });
        continue;
      }
      if (lastSeq !== undefined) {
        adopted.set(meta.processId, { lastSeq, meta });
        continue;
      }
      const reason = 'its output log is gone (expired or removed) since it was listed';
      await this.lose(key, epoch, reason);
      lost.push({ processId: meta.processId, reason });
    }
    return adopted;
  }

  /** Marks a process of before `lost` and forgets its stdin record. Never rejects. */
  private async lose(key: ProcessKey, epoch: number, reason: string): Promise<void> {
    await this.parts.logs.markLost(key, reason);
    await this.parts.state.forgetStdin(key, epoch).catch(() => undefined);
  }

  /** The stdin records of `processIds` (those that kept one), by process id. Unreadable ones are left out. */
  private async readStdins(environmentId: string, processIds: readonly string[]): Promise<Map<string, StdinRecord>> {
    const found = new Map<string, StdinRecord>();
    for (const processId of processIds) {
      const record = await this.parts.state.stdin({ environmentId, processId }).catch(() => undefined);
      if (record !== undefined) found.set(processId, record);
    }
    return found;
  }

  /** Makes each adopted sized tty resizable again, from the pty path its stdin record kept. */
  private resumeSizedTtys(manager: EnvironmentManager, processes: readonly ExecProcess[], stdins: ReadonlyMap<string, StdinRecord>): void {
    const backend = manager.defaultEnvironment()?.getExecBackend();
    for (const process of processes) {
      const ttyPath = stdins.get(process.processId)?.ttyPath;
      if (backend !== undefined && ttyPath !== undefined && ttyPath !== null) backend.resumeSizedTty(process, ttyPath);
    }
  }

  /**
   * Keeps the stdin of each adopted process that kept one, for the operator API, until the process ends;
   * then its feeder, if still waiting, is stopped and released (whether or not the API wrote again).
   * The feeder of a process that was lost is stopped at once.
   */
  private keepStdins(id: string, processes: readonly ExecProcess[], stdins: ReadonlyMap<string, StdinRecord>): void {
    const byId = new Map(processes.map((process) => [process.processId, process]));
    for (const [processId, record] of stdins) {
      const process = byId.get(processId);
      const feeder = record.target === 'fifo' ? byId.get(record.writerProcessId) : undefined;
      if (process === undefined) {
        if (feeder !== undefined) stopHelper(feeder);
        continue;
      }
      const key = `${id}\u0000${processId}`;
      this.stdins.set(key, { process, record, feeder });
      process.state$.subscribe({
        complete: () => {
          if (this.stdins.get(key)?.process === process) this.stdins.delete(key);
          if (feeder !== undefined) stopHelper(feeder);
        },
      });
    }
  }
}

/** A process's log taken back: its last seq, and what the store listed of it. */
interface AdoptedLog {
  readonly lastSeq: number;
  readonly meta: ProcessMeta;
}

/** The stdin FIFOs' feeders among the records (taken back with their process, never listed). */
const helperIds = (stdins: ReadonlyMap<string, StdinRecord>): Set<string> =>
  new Set([...stdins.values()].filter((record) => record.target === 'fifo').map((record) => record.writerProcessId));

/** The records of the processes adopted (see `TakeBacks.run`): writes go on after the kept counter of the process they go to (the feeder, or a tty itself). */
function recordsOf(adopted: ReadonlyMap<string, AdoptedLog>, stdins: ReadonlyMap<string, StdinRecord>): AdoptedProcessRecord[] {
  const writers = new Map([...stdins.values()].map((record) => [record.writerProcessId, record.nextWriteId]));
  const helpers = helperIds(stdins);
  return [...adopted].map(([processId, { lastSeq, meta }]) => ({
    processId,
    lastSeq,
    nextWriteId: writers.get(processId) ?? 1,
    argv: meta.argv,
    tty: meta.tty,
    unlisted: helpers.has(processId),
  }));
}

/** Terminates a helper process if it still runs, then releases it. Never rejects. */
function stopHelper(helper: ExecProcess): void {
  void (helper.state === 'running' ? helper.terminate() : Promise.resolve(false)).catch(() => false).then(() => helper.release());
}
