/**
 * A hosted process's stdin as the operator API offers it: writes applied once per `writeId` (the last
 * 4096 remembered), in arrival order, each answered once the executor accepted it; an idempotent end of
 * input (end-of-file through the FIFO wrapper for `pipeStdin`, Ctrl-D for a tty).
 *
 * With persistence (the host's state store), each write's executor writeIds (and the end's) are reserved
 * from the stdin's own counter and kept (`StdinRecord`) BEFORE they are sent: a host restarted after a
 * crash takes the record back ({@link ProcessStdin} `restored`), sends a retried write again with the
 * same executor writeIds (the executor drops what it had), and its counter goes on after the record's.
 * The record is forgotten once the process ends ({@link ProcessStdin.dispose}).
 */
import { createHash } from 'node:crypto';
import type { ExecProcess } from '../../exec/exec-process';
import { writeIdsFor } from '../../exec/process-requests';
import { ClosedError, messageOf, StdinClosedError } from '../../errors';
import type { FifoFeeder } from '../../exec/fifo-feeder';
import type { StdinRecord, StdinWriteRecord } from '../../store/stdin-record';
import { PERSISTED_WRITES } from '../../store/stdin-record';
import { ApiProblem } from './problem';

/** How many writeIds a process remembers. */
export const REMEMBERED_WRITES = 4096;

const CTRL_D = 0x04;

/** Where the bytes go: the FIFO helper of a `pipeStdin` process, or the pty of the (tty) process itself. */
export type StdinTarget = { readonly kind: 'fifo'; readonly feeder: FifoFeeder } | { readonly kind: 'pty' };

/** Persists the stdin's record (atomically); rejects when it could not. One call at a time per process. */
export type PersistStdin = (record: StdinRecord) => Promise<void>;

/** How a {@link ProcessStdin} keeps its record across a host restart. */
export interface StdinPersistence {
  /** Where each record goes before the bytes it names are sent. */
  readonly persist: PersistStdin;
  /** Forgets the record (the process ended). Rejects with the store's error. @default nothing to forget */
  readonly forget?: () => Promise<void>;
  /** The record a restarted host took back for this process (its counter and writes go on from it). */
  readonly restored?: StdinRecord;
  /** A sized tty's pty path file on the executor (`StartedProcess.ttyPathFile`), kept in the record. @default the restored record's, else null */
  readonly ttyPath?: string | null;
}

interface Remembered {
  readonly fingerprint: string;
  readonly outcome: Promise<void>;
}

/** One process's stdin. */
export class ProcessStdin {
  private readonly writes = new Map<string, Remembered>();
  /** The latest writes as persisted (ids only), oldest first. */
  private persisted: StdinWriteRecord[] = [];
  /** Writes of before a restart, by client writeId: a retry goes out again with their executor writeIds. */
  private readonly before = new Map<string, StdinWriteRecord>();
  /**
   * Writes whose record could not be written (503, nothing sent), by client writeId, with their bytes'
   * fingerprint: a retry records and sends them with the executor writeIds they reserved (never new ones).
   */
  private readonly unrecorded = new Map<string, StdinWriteRecord & { readonly fingerprint: string }>();
  private queue: Promise<unknown> = Promise.resolve();
  private ended: Promise<void> | undefined;
  private endWriteId: number | null = null;
  /** The executor writeId the next send uses (reserved here, so a failed send never hands its ids on). */
  private nextWriteId: number;
  private lastByte = 0x0a;
  /** The first record's write (a new process's), settled. */
  private recorded: Promise<void> = Promise.resolve();
  /** The process ended: no record is kept any more. */
  private disposed = false;

  /**
   * @param process the command whose input this is (a write once it stopped running is refused)
   * @param persistence with a data dir: where the record goes, and the one taken back after a restart
   *   (then an end recorded before it is sent again, with its writeId)
   */
  constructor(
    private readonly process: ExecProcess,
    private readonly target: StdinTarget,
    private readonly persistence?: StdinPersistence,
  ) {
    const restored = persistence?.restored;
    this.nextWriteId = Math.max(this.writer.nextWriteId, restored?.nextWriteId ?? 1);
    if (restored === undefined) {
      if (persistence !== undefined) this.recorded = this.enqueue(() => this.persist()).catch(() => undefined);
      return;
    }
    this.persisted = [...restored.writes];
    for (const write of restored.writes) this.before.set(write.writeId, write);
    if (restored.endWriteId !== null) {
      const endWriteId = restored.endWriteId;
      this.endWriteId = endWriteId;
      this.ended = this.enqueue(() => this.sendEnd(endWriteId));
      this.ended.catch(() => undefined);
    }
  }

  /**
   * Writes `bytes` once for `writeId`: a repeat with the same bytes gets the first write's outcome; a
   * repeat with other bytes throws 422 `WRITE_ID_REUSED`; a write after the end, or once the process
   * no longer runs, throws 409 `STDIN_CLOSED`. Resolves once the executor accepted the bytes (after
   * every earlier write). A write of before a restart (found in the record) is sent again with its
   * executor writeIds (answered from the record once stdin was ended); its bytes cannot be compared.
   * With persistence, rejects with 503 `HOST_ERROR` (nothing sent) when its record could not be written.
   */
  write(writeId: string, bytes: Uint8Array): Promise<void> {
    const fingerprint = createHash('sha256').update(bytes).digest('base64');
    const seen = this.writes.get(writeId);
    if (seen !== undefined) {
      if (seen.fingerprint !== fingerprint) return Promise.reject(new ApiProblem(422, 'WRITE_ID_REUSED', `writeId ${writeId} was used for other bytes`));
      return seen.outcome;
    }
    const earlier = this.before.get(writeId);
    if (earlier === undefined && this.ended !== undefined) return Promise.reject(new ApiProblem(409, 'STDIN_CLOSED', 'the input of this process was ended'));
    const unrecorded = this.unrecorded.get(writeId);
    const reused = (): Promise<void> => Promise.reject(new ApiProblem(422, 'WRITE_ID_REUSED', `writeId ${writeId} was used for other bytes`));
    if (unrecorded !== undefined && unrecorded.fingerprint !== fingerprint) return reused();
    const outcome =
      earlier === undefined
        ? this.enqueue(() => this.sendNew(writeId, bytes, fingerprint))
        : this.ended !== undefined
          ? Promise.resolve()
          : this.enqueue(() => this.send(bytes, earlier.firstWriteId, true));
    const remembered = { fingerprint, outcome };
    this.writes.set(writeId, remembered);
    if (this.writes.size > REMEMBERED_WRITES) {
      const oldest = this.writes.keys().next().value;
      if (oldest !== undefined) this.writes.delete(oldest);
    }
    // Not recorded, so not sent: a retry of the same writeId tries again (with the writeIds it reserved).
    outcome.catch(() => (this.unrecorded.has(writeId) && this.writes.get(writeId) === remembered ? this.writes.delete(writeId) : undefined));
    return outcome;
  }

  /**
   * Ends the input after every earlier write (idempotent: a second end resolves with the first). An end
   * whose record could not be written (503, nothing sent) is tried again by the next call, with its writeId.
   */
  end(): Promise<void> {
    if (this.ended !== undefined) return this.ended;
    const ending = this.enqueue(async () => {
      const endWriteId = this.endWriteId ?? this.reserve(1);
      this.endWriteId = endWriteId;
      try {
        await this.persist();
      } catch (error: unknown) {
        if (this.ended === ending) this.ended = undefined;
        throw error;
      }
      await this.sendEnd(endWriteId);
    });
    this.ended = ending;
    return ending;
  }

  /**
   * The process ended: stops the FIFO helper if it is still waiting, and forgets the kept record once the
   * writes queued before are done (nothing is kept for it afterwards). Idempotent; never rejects. For a
   * process that left because its host let go of it (the host stops, drains or was fenced: its manager
   * closed), pass `keepRecord`: the host that takes the process back goes on from the record.
   */
  async dispose(keepRecord = false): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const forget = keepRecord ? undefined : this.persistence?.forget;
    if (forget !== undefined) void this.queue.then(forget).catch(() => undefined);
    if (this.target.kind === 'fifo') await this.target.feeder.dispose();
  }

  /**
   * Writes its record again, as it is now (the shared store lost its data): after the writes under way.
   * Resolves once written, at once without persistence or once disposed; rejects with 503 `HOST_ERROR`.
   */
  rewrite(): Promise<void> {
    return this.enqueue(() => this.persist());
  }

  /** The process the `process/write`s go to, for its counter and id. */
  private get writer(): { readonly processId: string; readonly nextWriteId: number } {
    return this.target.kind === 'fifo' ? this.target.feeder : this.process;
  }

  /** Takes `count` executor writeIds (never one the writer used already); resolves the first. */
  private reserve(count: number): number {
    const first = Math.max(this.nextWriteId, this.writer.nextWriteId);
    this.nextWriteId = first + count;
    return first;
  }

  /**
   * Resolves once the first record of a new process's stdin (its writer, a sized tty's pty path) is on
   * the disk, or could not be written; at once without persistence or for a restored one. Never rejects.
   * The operator API answers a start after it, so a host restarted after the answer can resize the tty.
   */
  firstRecorded(): Promise<void> {
    return this.recorded;
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Reserves the write's executor writeIds (or takes those it reserved before its record failed), persists them, then sends. */
  private async sendNew(writeId: string, bytes: Uint8Array, fingerprint: string): Promise<void> {
    if (this.process.state !== 'running') throw this.closed('the process no longer runs');
    let entry: StdinWriteRecord | undefined = this.unrecorded.get(writeId);
    if (entry === undefined) {
      const count = this.target.kind === 'fifo' ? this.target.feeder.writeIdsOf(bytes) : writeIdsFor(bytes.byteLength);
      entry = { writeId, firstWriteId: this.reserve(count), count };
      this.persisted.push(entry);
      if (this.persisted.length > PERSISTED_WRITES) this.persisted.shift();
    }
    try {
      await this.persist();
    } catch (error: unknown) {
      this.unrecorded.set(writeId, { ...entry, fingerprint });
      if (this.unrecorded.size > REMEMBERED_WRITES) this.unrecorded.delete(this.unrecorded.keys().next().value ?? writeId);
      throw error;
    }
    this.unrecorded.delete(writeId);
    await this.send(bytes, entry.firstWriteId, false);
  }

  private async persist(): Promise<void> {
    if (this.persistence === undefined || this.disposed) return;
    const record: StdinRecord = {
      target: this.target.kind,
      writerProcessId: this.writer.processId,
      nextWriteId: this.nextWriteId,
      endWriteId: this.endWriteId,
      ttyPath: this.persistence.ttyPath ?? this.persistence.restored?.ttyPath ?? null,
      writes: this.persisted,
    };
    try {
      await this.persistence.persist(record);
    } catch (error: unknown) {
      const why = messageOf(error);
      throw new ApiProblem(503, 'HOST_ERROR', `the host could not record the write before sending it: ${why}`, { 'retry-after': '1' });
    }
  }

  private async send(bytes: Uint8Array, firstWriteId: number, again: boolean): Promise<void> {
    // The executor still accepts writes to a pty whose process has exited: they would go nowhere.
    if (this.process.state !== 'running') throw this.closed('the process no longer runs');
    if (bytes.byteLength > 0) this.lastByte = bytes[bytes.byteLength - 1] ?? this.lastByte;
    if (this.target.kind === 'fifo') {
      if (!(await this.target.feeder.write(bytes, firstWriteId, again))) throw this.closed('the process no longer reads its input');
      return;
    }
    try {
      await this.process.write(bytes, firstWriteId);
    } catch (error: unknown) {
      if (error instanceof StdinClosedError) throw new ApiProblem(409, 'STDIN_CLOSED', `the executor answered ${error.status}`);
      throw error;
    }
  }

  /**
   * Why a write cannot go out: 409 `STDIN_CLOSED` (final) when the process stopped reading; 503
   * `ENVIRONMENT_ELSEWHERE` (retry) when this host let go of it (it stops, drains, or another replica took
   * over): the host that takes it back writes it, with the same writeId.
   */
  private closed(why: string): ApiProblem {
    if (!letGo(this.process)) return new ApiProblem(409, 'STDIN_CLOSED', why);
    return new ApiProblem(503, 'ENVIRONMENT_ELSEWHERE', 'this host let go of the process (another replica serves it, or will): retry', { 'retry-after': '1' });
  }

  private async sendEnd(endWriteId: number): Promise<void> {
    if (this.target.kind === 'fifo') {
      await this.target.feeder.end(endWriteId);
      return;
    }
    const eof = this.lastByte === 0x0a || this.lastByte === 0x0d ? [CTRL_D] : [CTRL_D, CTRL_D];
    if (this.process.state === 'running') await this.process.write(Uint8Array.from(eof), endWriteId).catch((error: unknown) => {
      if (!(error instanceof StdinClosedError)) throw error;
    });
  }
}

/**
 * Whether `process` left because its host let go of it (its manager closed: the host stops, drains, or
 * another replica took over): its stdin record is then kept for the host that takes it back.
 */
export function letGo(process: ExecProcess): boolean {
  if (process.state !== 'failed') return false;
  for (let error: unknown = process.failure; error instanceof Error; error = error.cause) if (error instanceof ClosedError) return true;
  return false;
}
