import { ProcessFailedError, ProcessGapError } from '../errors';
import type { ExitedEvent, OutputStream, SequencedEvent } from '../wire/process-event';
import type { ReorderBuffer } from './reorder-buffer';
import { NOTHING_PUBLISHED, oversizedEventError } from './reorder-buffer';

/** One retained output chunk of a `process/read` result, already base64-decoded. */
export interface RecoveredChunk {
  readonly seq: number;
  readonly stream: OutputStream;
  readonly chunk: Uint8Array;
}

/** A decoded `process/read` result (docs/protocol.md#reading-with-a-cursor), as a recovery read returns it. */
export interface RecoveryRead {
  readonly chunks: readonly RecoveredChunk[];
  /** The next seq the server will assign (an unbounded read: `maxBytes` null). */
  readonly nextSeq: number;
  readonly exited: boolean;
  readonly exitCode: number | null;
  readonly closed: boolean;
  /** Non-null only in responses synthesized locally after a client failure (docs/protocol.md#reading-with-a-cursor). */
  readonly failure: string | null;
  readonly sandboxDenied: boolean;
}

/** What a valid read adds: the chunks above lastPublishedSeq (ascending) and a synthesized exit seq. */
interface RecoveryPlan {
  readonly target: number;
  readonly chunks: readonly RecoveredChunk[];
  readonly exit: ExitedEvent | undefined;
}

/**
 * Merges a recovery read into `buffer` (docs/protocol.md#merging-a-recovery-read, codex `recover_events`)
 * and returns the events it made publishable, in seq order (empty when the read brings nothing new:
 * `target <= lastPublishedSeq`, or the buffer already failed or published `closed`).
 *
 * Steps: (1) `failure` → error; (2) `target = nextSeq − 1`; (3) `closed` with a chunk or a pending
 * non-close event at `target` → error; (4) a chunk above `target` → error; (5) chunks above
 * lastPublishedSeq are inserted, and an unknown exit of an exited process is synthesized at the first
 * missing seq; (6) `closed` → `Closed{seq: target}`; (7) any other missing seq in
 * `(lastPublishedSeq, target]` → {@link ProcessGapError}; (8) everything contiguous is published.
 *
 * Unlike codex (which may publish part of the chunks before hitting an error), the read is validated
 * completely before anything is inserted, so an error leaves nothing half-merged. Every error first
 * fails the buffer; the caller then terminates the process and emits
 * `Failed("failed to recover process <id>: <error>")`.
 *
 * @throws ProcessFailedError `process failed while recovering: <failure>`,
 *   `process close sequence <t> conflicts with recovered output`,
 *   `recovered process output sequence <n> exceeds target sequence <t>`,
 *   `recovering exited process did not include its exit code`.
 * @throws ProcessGapError when seqs in `(lastPublishedSeq, target]` are neither recovered nor pending
 *   (the executor evicted them); `missingFromSeq` is the first missing seq, `missingToSeq` the target
 *   (codex's message: "…while recovering through sequence <target>").
 * @throws ReorderOverflowError when a recovered chunk is larger than `maxPendingBytes`.
 */
export function mergeRecoveryRead(buffer: ReorderBuffer, read: RecoveryRead): readonly SequencedEvent[] {
  // codex checks `failure` first, but never fails a process that already published `closed`.
  if (buffer.failed || buffer.closedPublished) return NOTHING_PUBLISHED;
  try {
    const plan = planRecovery(buffer, read);
    return plan === undefined ? NOTHING_PUBLISHED : applyPlan(buffer, read, plan);
  } catch (error: unknown) {
    buffer.fail();
    throw error;
  }
}

function planRecovery(buffer: ReorderBuffer, read: RecoveryRead): RecoveryPlan | undefined {
  const id = buffer.processId;
  if (read.failure !== null) throw new ProcessFailedError(id, `process failed while recovering: ${read.failure}`);
  const target = read.nextSeq - 1;
  const last = buffer.lastPublishedSeq;
  if (target <= last) return undefined;
  validateChunks(buffer, read, target);
  const chunks = newChunksAscending(read.chunks, last);
  const covered = coveredSeqs(buffer, read, chunks, target);
  const missing = target - last - covered.size;
  let firstMissing = last + 1;
  while (firstMissing <= target && covered.has(firstMissing)) firstMissing += 1;
  const exit = resolveExit(buffer, read, { target, missing, firstMissing, chunks });
  return { target, chunks, exit };
}

/** Steps 3 and 4, plus the single-event size limit (so that inserting can no longer fail). */
function validateChunks(buffer: ReorderBuffer, read: RecoveryRead, target: number): void {
  const id = buffer.processId;
  if (read.closed) {
    const atTarget = buffer.pendingAt(target);
    const conflict =
      (atTarget !== undefined && atTarget.type !== 'closed') || read.chunks.some((c) => c.seq === target);
    if (conflict) throw new ProcessFailedError(id, `process close sequence ${target} conflicts with recovered output`);
  }
  const maxBytes = buffer.limits.maxPendingBytes;
  for (const chunk of read.chunks) {
    if (chunk.seq > target) {
      throw new ProcessFailedError(
        id,
        `recovered process output sequence ${chunk.seq} exceeds target sequence ${target}`,
      );
    }
    if (chunk.chunk.byteLength > maxBytes) throw oversizedEventError(id, chunk.chunk.byteLength, maxBytes);
  }
}

/** Chunks above `last`, ascending and without duplicate seqs (the server sends them ascending). */
function newChunksAscending(chunks: readonly RecoveredChunk[], last: number): readonly RecoveredChunk[] {
  const fresh = chunks.filter((c) => c.seq > last);
  for (let i = 1; i < fresh.length; i += 1) {
    const previous = fresh[i - 1];
    const current = fresh[i];
    if (previous !== undefined && current !== undefined && previous.seq >= current.seq) {
      const sorted = [...fresh].sort((a, b) => a.seq - b.seq);
      return sorted.filter((c, j) => j === 0 || sorted[j - 1]?.seq !== c.seq);
    }
  }
  return fresh;
}

/** Seqs in `(lastPublishedSeq, target]` that a recovered chunk, a pending event or the close fills. */
function coveredSeqs(
  buffer: ReorderBuffer,
  read: RecoveryRead,
  chunks: readonly RecoveredChunk[],
  target: number,
): Set<number> {
  const covered = new Set<number>();
  for (const chunk of chunks) covered.add(chunk.seq);
  const last = buffer.lastPublishedSeq;
  for (const seq of buffer.pendingSeqs()) if (seq > last && seq <= target) covered.add(seq);
  if (read.closed) covered.add(target);
  return covered;
}

interface Coverage {
  readonly target: number;
  readonly missing: number;
  readonly firstMissing: number;
  readonly chunks: readonly RecoveredChunk[];
}

/** Steps 5 and 7: where a synthesized exit goes, or which error the read deserves (codex's order). */
function resolveExit(buffer: ReorderBuffer, read: RecoveryRead, coverage: Coverage): ExitedEvent | undefined {
  const { target, missing, firstMissing, chunks } = coverage;
  const gap = (): ProcessGapError =>
    new ProcessGapError(buffer.processId, Math.min(firstMissing, target), target);
  if (!read.exited || buffer.exitSeen) {
    if (missing !== 0) throw gap();
    return undefined;
  }
  const lastChunk = chunks[chunks.length - 1];
  // codex synthesizes the exit as soon as a chunk jumps over the first hole, or after the chunks when
  // exactly one seq is missing; either way it needs the exit code first.
  const wouldSynthesize = missing === 1 || (missing > 1 && lastChunk !== undefined && lastChunk.seq > firstMissing);
  const exitCode = read.exitCode;
  if (wouldSynthesize && exitCode === null) {
    throw new ProcessFailedError(buffer.processId, 'recovering exited process did not include its exit code');
  }
  if (missing !== 1 || exitCode === null) throw gap();
  return { type: 'exited', seq: firstMissing, exitCode, sandboxDenied: read.sandboxDenied };
}

/** Inserts in ascending seq order: every insert fills the next gap, so no limit can trip. */
function applyPlan(buffer: ReorderBuffer, read: RecoveryRead, plan: RecoveryPlan): readonly SequencedEvent[] {
  if (read.sandboxDenied) buffer.markPendingExitSandboxDenied();
  const out: SequencedEvent[] = [];
  let exit = plan.exit;
  const insert = (event: SequencedEvent): void => {
    for (const published of buffer.push(event)) out.push(published);
  };
  for (const chunk of plan.chunks) {
    if (exit !== undefined && chunk.seq > exit.seq) {
      insert(exit);
      exit = undefined;
    }
    insert({ type: 'output', seq: chunk.seq, stream: chunk.stream, chunk: chunk.chunk });
  }
  if (exit !== undefined) insert(exit);
  if (read.closed) insert({ type: 'closed', seq: plan.target });
  return out;
}
