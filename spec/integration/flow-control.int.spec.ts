/**
 * Flow control against the real codex 0.171.0 executor: a pull consumer (`ExecProcess.toReadable`) that
 * stalls holds the connection paused, so the executor's writes back up instead of our memory filling,
 * and every byte arrives once it reads again. Over a dialled WebSocket and over stdio.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import type { Environment } from '../../src';
import { EnvironmentManager } from '../../src';
import { startListeningExecutor, startStdioExecutor } from '../support/executor';
import { yesDigest } from '../support/yes-digest';

const TOTAL = 50_000_000;
const HIGH_WATER_MARK = 256 * 1024;
/** What may be buffered while stalled: the Readable's mark, what was on its way, and the history (1 MiB). */
const STALLED_BOUND = 8 * 1024 * 1024;
const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

/** Resolves after `ms` (a stall: the consumer does nothing meanwhile). */
const stall = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads `readable` to its end into `hash`; resolves with the byte count. */
async function readAll(readable: Readable, hash: ReturnType<typeof createHash>): Promise<number> {
  let bytes = 0;
  for await (const chunk of readable) {
    const buffer = chunk as Buffer;
    hash.update(buffer);
    bytes += buffer.byteLength;
  }
  return bytes;
}

async function openEnvironment(mode: 'websocket' | 'stdio'): Promise<{ environment: Environment; manager: EnvironmentManager }> {
  const manager =
    mode === 'websocket'
      ? await EnvironmentManager.connect('flow', (await startListeningExecutor()).url ?? '', { clientName: 'exec-rx-spec' })
      : await EnvironmentManager.fromStdio('flow', (await startStdioExecutor()).child, { clientName: 'exec-rx-spec' });
  const environment = manager.defaultEnvironment();
  if (environment === undefined) throw new Error('no default environment');
  return { environment, manager };
}

describe('flow control against the real executor', () => {
  it.each(['websocket', 'stdio'] as const)('a stalled pull consumer pauses the %s connection, memory stays bounded, and it gets every byte', async (mode) => {
    const { environment, manager } = await openEnvironment(mode);
    try {
      const { process } = await environment.getExecBackend().start({ argv: ['sh', '-c', `yes | head -c ${TOTAL}`], cwd: '/tmp', env: PATH_ENV });
      let arrived = 0;
      const counting = process.bytes$('stdout').subscribe((chunk) => (arrived += chunk.byteLength));
      const readable = process.toReadable('stdout', { highWaterMark: HIGH_WATER_MARK });

      // Nobody reads: the Readable fills to its mark and holds the connection paused.
      await firstValueFrom(environment.flow.paused$.pipe(filter((paused) => paused)));
      await stall(1_500);
      expect(environment.flow.facts).toMatchObject({ paused: true, holds: 1, pauses: 1 });
      expect(readable.readableLength).toBeGreaterThanOrEqual(HIGH_WATER_MARK);
      expect(readable.readableLength + process.retained.bytes).toBeLessThan(STALLED_BOUND);
      expect(arrived).toBeLessThan(STALLED_BOUND);
      // The command is blocked on its pipe, not finished: the output waits on the executor's side.
      expect(process.exitCode).toBeUndefined();

      // A slow consumer: a few small reads apart, each taking the buffer below the mark for a moment.
      const hash = createHash('sha256');
      let bytes = 0;
      for (let i = 0; i < 20; i += 1) {
        const chunk = readable.read(64 * 1024) as Buffer | null;
        if (chunk !== null) {
          hash.update(chunk);
          bytes += chunk.byteLength;
        }
        await stall(20);
      }
      expect(environment.flow.facts.pauses).toBeGreaterThan(1);

      // Then it reads at full speed to the end.
      bytes += await readAll(readable, hash);
      expect(bytes).toBe(TOTAL);
      expect(hash.digest('hex')).toBe(yesDigest(TOTAL));
      expect(await firstValueFrom(process.exitCode$)).toBe(0);
      const facts = environment.flow.facts;
      expect(facts).toMatchObject({ paused: false, holds: 0 });
      expect(facts.pausedMs).toBeGreaterThanOrEqual(1_500);
      counting.unsubscribe();
    } finally {
      await manager.close({ terminateProcesses: true });
    }
  });
});
