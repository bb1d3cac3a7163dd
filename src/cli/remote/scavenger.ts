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
 *
 * Why it is still here (issue 40; docs/performance.md, "The CLI's scavenge on the binary path: what was
 * ruled out"). The pile is V8's own rule: a new ArrayBuffer's backing store forces a scavenge only once
 * the young generation's backing stores reach 2 × the default max semi-space (2 × 16 MiB on x64,
 * `Heap::AllocateExternalBackingStore`), and the scavenges the cli's little JS garbage causes come later.
 * Every socket read allocates one (Node's stream read buffer; undici's fetch adds its copy), so up to
 * 32 MiB of dead buffers wait. Measured in a harness (60 MB from a local HTTP server into a throttled
 * pipe reader, 3 runs each, peak RSS over the warm RSS / peak `arrayBuffers`): fetch + reader +19.3 /
 * 26 MiB; with this scavenge +5.7 / 13; fetch's byob reader into one reused buffer +19.0 (copied out) and
 * +13.6 / 18 (written from it, waiting for each write): undici and Node still allocate per read;
 * node:http `for await` +31.5 / 32.4 and paused `read()` +29.6 / 32.4 (less JS garbage, so only V8's
 * 32 MiB rule collects); `net.connect({ onread })` into one reused buffer, no HTTP library: +3.7 /
 * 0.1 MiB. Not the cause: the decoder's views (after a scavenge `arrayBuffers` falls to 1–3 MiB: dead,
 * not retained) nor stdout backpressure (the cli and the harness wait for `drain`). So the cause is the
 * per-read allocation below our code; removing it means reading the socket with `onread` and parsing
 * HTTP/1.1 (and TLS) ourselves instead of fetch, not done. Node 20 has no `ArrayBuffer.prototype.transfer`
 * to free a written chunk at once, and `--max-semi-space-size` cannot be set for a library user.
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
