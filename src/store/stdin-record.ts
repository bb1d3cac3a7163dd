/**
 * What a host keeps of a process's stdin so that a restarted host can go on writing it: which process the
 * bytes go to (the stdin FIFO's feeder, or the process's own pty), that process's writeId counter, the
 * operator API's recent writeIds with the executor writeIds each became, whether stdin was ended, and a
 * sized tty's pty path file. Only ids and counters: never the bytes (stdin may carry secrets), nor a
 * digest of them. The state port keeps it (`StateStore.setStdin`), written before the bytes it names
 * are sent.
 */

/**
 * How many of the operator API's writes the record keeps (the latest): a write retried after a
 * restart is found among them. The executor itself remembers the last 4096 writeIds of a process.
 */
export const PERSISTED_WRITES = 256;

/** One write of the operator API, as the executor got it. */
export interface StdinWriteRecord {
  /** The client's writeId (`POST …/stdin {writeId}`). */
  readonly writeId: string;
  /** The executor writeId of its first `process/write` (the writer's counter when it was sent). */
  readonly firstWriteId: number;
  /** How many `process/write` calls (consecutive writeIds) it took; 0 for an empty write. */
  readonly count: number;
}

/** A process's stdin as kept (see the module's doc). */
export interface StdinRecord {
  /** `fifo`: the bytes go to the feeder of the stdin FIFO; `pty`: to the process itself (a tty). */
  readonly target: 'fifo' | 'pty';
  /** The process the `process/write`s go to: the feeder (`fifo`) or the process itself (`pty`). */
  readonly writerProcessId: string;
  /** The executor writeId the writer's next `process/write` uses (the counter goes on from here). */
  readonly nextWriteId: number;
  /** The executor writeId the end of input went (or goes) out with; null while stdin is open. */
  readonly endWriteId: number | null;
  /** A sized tty's pty path as the executor records it (the file in its temp dir that names the pty, which resizes use); null otherwise. */
  readonly ttyPath: string | null;
  /** The latest writes, oldest first, at most {@link PERSISTED_WRITES}. */
  readonly writes: readonly StdinWriteRecord[];
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isId = (value: unknown): value is number => isCount(value) && value >= 1;

function writeOf(value: unknown): StdinWriteRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { writeId, firstWriteId, count } = value as Record<string, unknown>;
  return typeof writeId === 'string' && isId(firstWriteId) && isCount(count) ? { writeId, firstWriteId, count } : undefined;
}

/** A record read back (a file's JSON object, a stored hash), or undefined when a field is missing or wrong. */
export function stdinRecordOf(fields: Readonly<Record<string, unknown>>): StdinRecord | undefined {
  const { target, writerProcessId, nextWriteId, endWriteId, ttyPath, writes } = fields;
  if ((target !== 'fifo' && target !== 'pty') || typeof writerProcessId !== 'string' || !isId(nextWriteId) || !Array.isArray(writes)) return undefined;
  if (endWriteId !== null && !isId(endWriteId)) return undefined;
  const decoded = writes.map(writeOf);
  if (!decoded.every((write): write is StdinWriteRecord => write !== undefined)) return undefined;
  return { target, writerProcessId, nextWriteId, endWriteId, ttyPath: typeof ttyPath === 'string' ? ttyPath : null, writes: decoded };
}

/** A record's fields alone (a copy: nothing of the caller's object is kept), as a store writes them. */
export function stdinFields(record: StdinRecord): StdinRecord {
  const { target, writerProcessId, nextWriteId, endWriteId, ttyPath, writes } = record;
  return { target, writerProcessId, nextWriteId, endWriteId, ttyPath, writes: writes.map(({ writeId, firstWriteId, count }) => ({ writeId, firstWriteId, count })) };
}
