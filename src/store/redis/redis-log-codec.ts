/**
 * How the log store writes a process's events and metadata into Redis, and reads them back.
 *
 * A stream entry's id is `${seq}-0` (so a reader's `Last-Event-ID` stays the seq); its fields: `k` the
 * kind (`o` output, `x` exited, `c` closed, `g` a hole the executor left), `t` the receipt time, and for
 * output `s` the stream and `b` the chunk's raw bytes (binary-safe, never base64); for an exit `e` the code
 * and `d` whether the sandbox denied it; for a hole `f` its first seq (the entry's id is its last) and `n`
 * the output bytes it held when known. The append script stamps every entry with `w`, its writer (the
 * replica's owner name), and `p`, the writer's epoch: a record of who wrote what, which readers ignore and
 * an audit of the log (the nemesis suite's) reads back.
 */
import type { OutputStream } from '../../wire/process-event';
import type { TimedEvent } from '../log-events';
import type { ProcessKey, ProcessLogState, ProcessMeta } from '../process-meta';
import { PROCESS_LOG_STATES } from '../process-meta';
import type { ScriptArg } from './redis-log-scripts';

/** A hole the executor left, as the log records it: the seqs `fromSeq..seq` will never come. */
export interface GapRecord {
  /** The record's kind. */
  readonly type: 'gap';
  /** The hole's last seq (the entry's id). */
  readonly seq: number;
  /** The hole's first seq. */
  readonly fromSeq: number;
  /** The output bytes the hole held, when known (else 0). */
  readonly droppedBytes: number;
  /** When the log took it. */
  readonly time: number;
}

/** What a process's stream holds: events and holes. */
export type LogRecord = TimedEvent | GapRecord;

/** Output bytes a record holds. */
export const payloadOf = (record: LogRecord): number => (record.type === 'output' ? record.chunk.byteLength : 0);

/** The `append` script's arguments for one record: seq, output bytes, field pairs, the pairs. */
export function encodeRecord(record: LogRecord): ScriptArg[] {
  const time = String(record.time);
  let pairs: ScriptArg[];
  switch (record.type) {
    case 'output':
      pairs = ['k', 'o', 't', time, 's', record.stream, 'b', Buffer.from(record.chunk.buffer, record.chunk.byteOffset, record.chunk.byteLength)];
      break;
    case 'exited':
      pairs = ['k', 'x', 't', time, 'e', String(record.exitCode), 'd', record.sandboxDenied ? '1' : '0'];
      break;
    case 'closed':
      pairs = ['k', 'c', 't', time];
      break;
    case 'gap':
      pairs = ['k', 'g', 't', time, 'f', String(record.fromSeq), 'n', String(record.droppedBytes)];
      break;
  }
  return [String(record.seq), String(payloadOf(record)), String(pairs.length / 2), ...pairs];
}

const STREAMS: readonly OutputStream[] = ['stdout', 'stderr', 'pty'];

/** The seq of a stream entry id (`${seq}-0`); NaN for an id this store did not write. */
export const seqOfId = (id: Buffer | string): number => Number(String(id).split('-', 1)[0]);

/** A stream entry read back (`XRANGE` with Buffer replies); undefined for an entry this store did not write. */
export function decodeEntry(id: Buffer, flat: readonly Buffer[]): LogRecord | undefined {
  const seq = seqOfId(id);
  if (!Number.isSafeInteger(seq)) return undefined;
  const fields = new Map<string, Buffer>();
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = flat[i];
    const value = flat[i + 1];
    if (name !== undefined && value !== undefined) fields.set(name.toString('latin1'), value);
  }
  const text = (name: string): string => fields.get(name)?.toString('utf8') ?? '';
  const time = Number(text('t')) || 0;
  switch (text('k')) {
    case 'o': {
      const stream = STREAMS.find((known) => known === text('s')) ?? 'stdout';
      const bytes = fields.get('b') ?? Buffer.alloc(0);
      return { type: 'output', seq, stream, chunk: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), time };
    }
    case 'x':
      return { type: 'exited', seq, exitCode: Number(text('e')) || 0, sandboxDenied: text('d') === '1', time };
    case 'c':
      return { type: 'closed', seq, time };
    case 'g':
      return { type: 'gap', seq, fromSeq: Number(text('f')) || seq, droppedBytes: Number(text('n')) || 0, time };
    default:
      return undefined;
  }
}

/** What the meta hash holds beside {@link ProcessMeta}: the log's own counters, kept by the `append` script. */
export interface LogCounters {
  /** The last seq the stream holds or covers. */
  readonly lastSeq: number;
  /** Output bytes the stream holds. */
  readonly storedBytes: number;
  /** The last seq the quota dropped (0: none). */
  readonly trimmedTo: number;
  /** Output bytes the quota dropped, ever. */
  readonly droppedBytes: number;
  /** The epoch of the process's writer. */
  readonly epoch: number;
}

const nullable = (value: number | null): string => (value === null ? '' : String(value));

/** The meta hash's fields for `patch` (field, value, field, value, ...). */
export function encodeMeta(patch: Partial<ProcessMeta>): string[] {
  const fields: string[] = [];
  const put = (name: string, value: string): void => void fields.push(name, value);
  if (patch.state !== undefined) put('state', patch.state);
  if (patch.argv !== undefined) put('argv', JSON.stringify(patch.argv));
  if (patch.tty !== undefined) put('tty', patch.tty ? '1' : '0');
  if (patch.exitCode !== undefined) put('exitCode', nullable(patch.exitCode));
  if (patch.startedAt !== undefined) put('startedAt', String(patch.startedAt));
  if (patch.exitedAt !== undefined) put('exitedAt', nullable(patch.exitedAt));
  if (patch.endedAt !== undefined) put('endedAt', nullable(patch.endedAt));
  if (patch.released !== undefined) put('released', patch.released ? '1' : '0');
  if (patch.lostReason !== undefined) put('lostReason', patch.lostReason ?? '');
  if (patch.startedBy !== undefined) put('startedBy', patch.startedBy);
  return fields;
}

const numberOr = (text: string | undefined, fallback: number): number => {
  const value = text === undefined || text === '' ? NaN : Number(text);
  return Number.isFinite(value) ? value : fallback;
};
const numberOrNull = (text: string | undefined): number | null => (text === undefined || text === '' ? null : numberOr(text, 0));

function argvOf(text: string | undefined): string[] {
  try {
    const parsed: unknown = JSON.parse(text ?? '[]');
    return Array.isArray(parsed) ? parsed.filter((arg): arg is string => typeof arg === 'string') : [];
  } catch {
    return [];
  }
}

/** The process's metadata from its meta hash (`HGETALL`); undefined when the hash is empty (no such process). */
export function decodeMeta(key: ProcessKey, hash: Readonly<Record<string, string>>): ProcessMeta | undefined {
  if (hash.startedAt === undefined) return undefined;
  const state: ProcessLogState = PROCESS_LOG_STATES.find((known) => known === hash.state) ?? 'unknown';
  const meta: ProcessMeta = {
    environmentId: key.environmentId,
    processId: key.processId,
    argv: argvOf(hash.argv),
    tty: hash.tty === '1',
    state,
    exitCode: numberOrNull(hash.exitCode),
    startedAt: numberOr(hash.startedAt, 0),
    exitedAt: numberOrNull(hash.exitedAt),
    endedAt: numberOrNull(hash.endedAt),
    released: hash.released === '1',
    lostReason: hash.lostReason === undefined || hash.lostReason === '' ? null : hash.lostReason,
  };
  return hash.startedBy === undefined ? meta : { ...meta, startedBy: hash.startedBy };
}

/** The log's counters from its meta hash. */
export function decodeCounters(hash: Readonly<Record<string, string>>): LogCounters {
  return {
    lastSeq: numberOr(hash.lastSeq, 0),
    storedBytes: numberOr(hash.storedBytes, 0),
    trimmedTo: numberOr(hash.trimmedTo, 0),
    droppedBytes: numberOr(hash.droppedBytes, 0),
    epoch: numberOr(hash.epoch, 0),
  };
}

/**
 * What the owner of a process's log could not write, once its log failed (LOG_WRITE_FAILED): the meta
 * hash records it (`writeFailedErrno`, `…From`, `…To`, `…Bytes`) so that a reader on any replica gets the
 * owner's `writeFailed` marker and failure. The owner updates it as it counts more lost.
 */
export interface WriteFailure {
  /** Why the write failed (`ENOBUFS`, `ETIMEDOUT`, a reply error's code). */
  readonly errno: string;
  /** The first seq not written: the stream's entries from it on are not served (a call in flight may have landed them). */
  readonly fromSeq: number;
  /** The last seq known lost. */
  readonly toSeq: number;
  /** The output bytes known lost. */
  readonly lostBytes: number;
}

/** The meta hash's fields of `failure`; of none, the fields that clear it (a new writer took the process back). */
export const encodeWriteFailure = (failure: WriteFailure | undefined): string[] =>
  failure === undefined
    ? ['writeFailedErrno', '', 'writeFailedFrom', '', 'writeFailedTo', '', 'writeFailedBytes', '']
    : ['writeFailedErrno', failure.errno, 'writeFailedFrom', String(failure.fromSeq), 'writeFailedTo', String(failure.toSeq), 'writeFailedBytes', String(failure.lostBytes)];

/** The write failure a meta hash records, if any. */
export function decodeWriteFailure(hash: Readonly<Record<string, string>>): WriteFailure | undefined {
  const errno = hash.writeFailedErrno;
  if (errno === undefined || errno === '') return undefined;
  const fromSeq = numberOr(hash.writeFailedFrom, 1);
  return { errno, fromSeq, toSeq: numberOr(hash.writeFailedTo, fromSeq - 1), lostBytes: numberOr(hash.writeFailedBytes, 0) };
}

/**
 * The meta fields of a process taken back at `epoch`: running again, no longer expiring, and without a write
 * failure of the writer before (the new one goes on from what Redis holds).
 */
export const takenBackFields = (epoch: number): string[] => [
  ...encodeMeta({ state: 'running', endedAt: null, lostReason: null }),
  'epoch',
  String(epoch),
  ...encodeWriteFailure(undefined),
];
