/**
 * One build's side of the frames A/B (`frames-ab.ts`), in a process of its own:
 * `node --expose-gc <copy>/bench/lib/frames-ab-child.js PEER_URL`. `<copy>` is a copy of the driver's
 * `dist/bench` with `<copy>/src` a link to the build under test, so `./runs` (`rxConnect`, `rxRun`) is the
 * frozen harness and `../../src` the build. It connects exec-rx to the synthetic peer, then answers each
 * stdin line `CHUNK FRAMES` with one JSON line: the turn of `suites/frames.ts`'s exec-rx column (a full GC
 * first, then `process.cpuUsage()` around `rxRun` of `[synthetic, CHUNK, FRAMES]`, every frame and byte
 * checked) as `{"fps", "cpuUs"}`, or `{"error"}`. It closes its connection and exits when stdin ends.
 */
import { createInterface } from 'node:readline';
import { expectEqual, rxConnect, rxEnvironment, rxRun } from './runs';

const url = process.argv[2] ?? '';
const gc = (globalThis as { gc?: () => void }).gc;

async function turn(environment: ReturnType<typeof rxEnvironment>, chunk: number, frames: number): Promise<{ fps: number; cpuUs: number }> {
  gc?.();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const cpu0 = process.cpuUsage();
  const result = await rxRun(environment, ['synthetic', String(chunk), String(frames)]);
  const cpu = process.cpuUsage(cpu0);
  expectEqual('frames', result.frames, frames);
  expectEqual('bytes', result.bytes, frames * chunk);
  return { fps: frames / (result.ms / 1000), cpuUs: (cpu.user + cpu.system) / frames };
}

async function main(): Promise<void> {
  const manager = await rxConnect(url);
  try {
    const environment = rxEnvironment(manager);
    process.stdout.write('ready\n');
    for await (const line of createInterface({ input: process.stdin })) {
      const [chunk = 0, frames = 0] = line.split(' ').map(Number);
      try {
        process.stdout.write(`${JSON.stringify(await turn(environment, chunk, frames))}\n`);
      } catch (error: unknown) {
        process.stdout.write(`${JSON.stringify({ error: error instanceof Error ? error.message : String(error) })}\n`);
      }
    }
  } finally {
    await manager.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`frames-ab-child: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
