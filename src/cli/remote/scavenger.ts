/**
 * A young-generation collection every few MiB of output the cli wrote from the binary event stream.
 *
 * Why: the binary stream hands output on as the bytes that came, so the cli makes almost no garbage of
 * its own per event, and V8 runs its scavenger rarely (when the young generation, 16 MiB, fills with the
 * little it does make). But every socket read makes ArrayBuffers (Node's read buffer, and undici's copy
 * of it for the body's stream) that are garbage as soon as their bytes were written, and V8 frees those
 * only at a collection: between two, they piled up to about 30 MiB, until V8's external-memory limit
 * forced a collection (measured with a reader throttled to 10 MB/s: peak RSS idle + 32 MiB, against
 * + 7 MiB when the SSE stream's strings made the scavenger run often). A scavenge every 4 MiB
 * written keeps it at + 10 MiB, for about 0.5 ms each (1 % of a core at 100 MB/s).
 *
 * `gc` is exposed by setting V8's `--expose-gc` at run time and taking the function from a new context
 * (the flag exposes it only to contexts made after it is set). Without it (a V8 that refuses), nothing
 * is collected early and the memory is as described.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Output bytes between two scavenges. */
export const SCAVENGE_EVERY_BYTES = 4 * 1024 * 1024;

type Collect = (options: { readonly type: 'minor' }) => void;

let collect: Collect | null | undefined;

function collector(): Collect | null {
  if (collect !== undefined) return collect;
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('typeof gc === "function" ? gc : undefined');
    collect = typeof gc === 'function' ? (options) => void (gc as Collect)(options) : null;
  } catch {
    collect = null;
  }
  return collect;
}

/** Counts output bytes written, and runs a scavenge each {@link SCAVENGE_EVERY_BYTES}. */
export class Scavenger {
  private sinceLast = 0;

  /** `bytes` more were written. */
  wrote(bytes: number): void {
    this.sinceLast += bytes;
    if (this.sinceLast < SCAVENGE_EVERY_BYTES) return;
    this.sinceLast = 0;
    collector()?.({ type: 'minor' });
  }
}
