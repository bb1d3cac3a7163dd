/**
 * The floor of the frame figures: what any JavaScript client must do per `process/output` frame, and
 * nothing more — turn the frame's bytes into a string, `JSON.parse` it, and base64-decode its chunk into
 * a reused buffer (no allocation for the bytes). Measured in the bench process itself, on frames built
 * like the synthetic peer's (same template, same chunk size), so that the table shows how far both
 * clients are from the limit.
 */
import { randomBytes } from 'node:crypto';

/** 64 distinct frames (seq 1..64) with `chunkBytes` of random output each, as the peer writes them. */
function frames(chunkBytes: number): Buffer[] {
  const chunk = randomBytes(chunkBytes).toString('base64');
  return Array.from({ length: 64 }, (_v, i) =>
    Buffer.from(`{"method":"process/output","params":{"processId":"floor-1","seq":${String(i + 1).padStart(12, ' ')},"stream":"stdout","chunk":"${chunk}"}}`, 'utf8'),
  );
}

/** The floor's frames per second (of CPU time) and CPU time per frame (µs), over `count` frames. */
export function measureFloor(chunkBytes: number, count: number): { readonly fps: number; readonly cpuUs: number } {
  const built = frames(chunkBytes);
  const scratch = Buffer.allocUnsafe(chunkBytes + 16);
  let bytes = 0;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < count; i += 1) {
    const message = JSON.parse((built[i & 63] ?? Buffer.alloc(0)).toString()) as { readonly params: { readonly chunk: string } };
    bytes += scratch.write(message.params.chunk, 0, 'base64');
  }
  const cpu = process.cpuUsage(cpu0);
  if (bytes !== chunkBytes * count) throw new Error(`floor decoded ${bytes} bytes, expected ${chunkBytes * count}`);
  const cpuUs = (cpu.user + cpu.system) / count;
  return { fps: 1e6 / cpuUs, cpuUs };
}
