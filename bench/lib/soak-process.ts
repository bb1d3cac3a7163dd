/**
 * One process of the soak: about 64 KiB/s of random bytes (16 KiB every 0.25 s) for 5 to 15 s, written
 * through `tee` to a file whose sha256 the process prints on stderr at the end. The consumer hashes
 * stdout as it arrives through `events$`, checks the seqs are 1..n without a gap, and releases the
 * process once it closed.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Environment } from '../../src';

const BLOCK_BYTES = 16 * 1024;
const BLOCK_INTERVAL_S = 0.25;

/** What became of one soak process. */
export type SoakProcessOutcome =
  /** Its output was exact. */
  | { readonly kind: 'exact' }
  /** Its output was not (what was wrong). */
  | { readonly kind: 'wrong'; readonly detail: string }
  /** `process/start` failed: the socket dropped before its reply (a start is never sent twice). */
  | { readonly kind: 'notStarted'; readonly error: string };

/** Runs process number `n` and checks its output. */
export async function runSoakProcess(environment: Environment, work: string, n: number): Promise<SoakProcessOutcome> {
  const blocks = 20 + ((n * 7919) % 41); // 5..15 s, spread so that processes do not end together
  const file = join(work, `p${n}.bin`);
  const script = `i=0; while [ $i -lt ${blocks} ]; do head -c ${BLOCK_BYTES} /dev/urandom; sleep ${BLOCK_INTERVAL_S}; i=$((i+1)); done | tee '${file}'; sha256sum '${file}' >&2; rm -f '${file}'`;
  let started;
  try {
    started = await environment.getExecBackend().start({ argv: ['/bin/sh', '-c', script], cwd: work, env: { PATH: '/usr/bin:/bin' } });
  } catch (error: unknown) {
    return { kind: 'notStarted', error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
  const proc = started.process;
  const hash = createHash('sha256');
  let stdoutBytes = 0;
  let stderr = '';
  let expectedSeq = 1;
  let problem: string | undefined;
  let exitCode: number | undefined;
  await new Promise<void>((resolve) =>
    proc.events$.subscribe({
      next: (event) => {
        if (event.type === 'truncated' || event.type === 'failed') {
          problem ??= event.type === 'failed' ? `failed: ${event.error.message}` : `truncated at ${event.nextSeq}`;
          return;
        }
        if (event.seq !== expectedSeq) problem ??= `seq ${event.seq} where ${expectedSeq} was due`;
        expectedSeq = event.seq + 1;
        if (event.type === 'output' && event.stream === 'stdout') {
          hash.update(event.chunk);
          stdoutBytes += event.chunk.byteLength;
        } else if (event.type === 'output') stderr += Buffer.from(event.chunk.buffer, event.chunk.byteOffset, event.chunk.byteLength).toString('utf8');
        else if (event.type === 'exited') exitCode = event.exitCode;
      },
      complete: () => resolve(),
    }),
  );
  proc.release();
  const [executorHash] = stderr.trim().split(/\s+/);
  const wrong = (detail: string): SoakProcessOutcome => ({ kind: 'wrong', detail: `process ${n}: ${detail}` });
  if (problem !== undefined) return wrong(problem);
  if (exitCode !== 0) return wrong(`exit code ${String(exitCode)}`);
  if (stdoutBytes !== blocks * BLOCK_BYTES) return wrong(`${stdoutBytes} bytes, expected ${blocks * BLOCK_BYTES}`);
  if (hash.digest('hex') !== executorHash) return wrong("sha256 differs from the executor's");
  return { kind: 'exact' };
}
