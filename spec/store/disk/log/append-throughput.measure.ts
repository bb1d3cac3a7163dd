/**
 * A one-off measure (not a spec, not an assertion): appends 100 MB of output in 8 KiB chunks to an
 * OutputLog on a temp dir, honouring its backpressure, then flushes and closes it, and prints the
 * process's CPU time (user + system, every thread: the writes run on libuv's pool) and the wall time.
 *
 *   npx esbuild spec/host/log/append-throughput.measure.ts --bundle --platform=node --outfile=/tmp/append-throughput.js
 *   node /tmp/append-throughput.js
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutputLog } from '../../../../src/store/disk/log/output-log';

const TOTAL_BYTES = 100 * 1024 * 1024;
const CHUNK_BYTES = 8 * 1024;

async function measure(round: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'exec-rx-log-measure-'));
  try {
    // A pool of distinct chunks, so that no write is a copy of one buffer only.
    const chunks = Array.from({ length: 64 }, () => new Uint8Array(randomBytes(CHUNK_BYTES)));
    const log = OutputLog.create(dir, `measure-${round}`);
    const cpu = process.cpuUsage();
    const wall = process.hrtime.bigint();
    let paused = 0;
    for (let seq = 1; seq <= TOTAL_BYTES / CHUNK_BYTES; seq += 1) {
      const chunk = chunks[seq % chunks.length] ?? new Uint8Array(CHUNK_BYTES);
      if (!log.append({ type: 'output', seq, stream: 'stdout', chunk })) {
        paused += 1;
        await log.whenBelowLowMark();
      }
    }
    await log.close();
    const used = process.cpuUsage(cpu);
    const cpuSeconds = (used.user + used.system) / 1e6;
    const wallSeconds = Number(process.hrtime.bigint() - wall) / 1e9;
    const mb = TOTAL_BYTES / 1e6;
    console.log(
      `round ${round}: ${mb.toFixed(0)} MB in ${TOTAL_BYTES / CHUNK_BYTES} chunks: ` +
        `cpu ${cpuSeconds.toFixed(3)} s (user ${(used.user / 1e6).toFixed(3)}, system ${(used.system / 1e6).toFixed(3)}) = ${(mb / cpuSeconds).toFixed(0)} MB/s of CPU; ` +
        `wall ${wallSeconds.toFixed(3)} s = ${(mb / wallSeconds).toFixed(0)} MB/s; paused ${paused} times; ${log.diskBytes} bytes on disk`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  for (let round = 1; round <= 3; round += 1) await measure(round);
}

void main();
