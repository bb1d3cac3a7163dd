/**
 * The anchor of the paths suite (`suites/paths.ts`): a bare `ws` consumer in a process of its own,
 * `node paths-bare.js URL BYTES`, doing what `exec-rx run --connect URL -- head -c BYTES /dev/zero` does
 * and nothing more: dial the listening executor, initialize, start the process, and write each output
 * chunk (JSON.parse and base64 decode: `lib/raw-client.ts`) to stdout, reading the socket no further while
 * more than 4 MiB wait in stdout's buffer. Exits once stdout drained after `process/closed` (0), or with 1
 * and one line on stderr.
 */
import { RawClient } from './lib/raw-client';

const [url = '', bytes = '0'] = process.argv.slice(2);
/** Pending stdout bytes above which the socket is paused (`exec-rx run` pauses at stdout's own mark, 16 KiB). */
const HIGH_WATER = 4 * 1024 * 1024;

async function main(): Promise<void> {
  const client = await RawClient.dial(url, { ackPong: true });
  let paused = false;
  const closed = new Promise<void>((resolve, reject) => {
    client
      .start(`bare-${process.pid}`, ['head', '-c', bytes, '/dev/zero'], {
        output: (chunk) => {
          process.stdout.write(chunk);
          if (paused || process.stdout.writableLength <= HIGH_WATER) return;
          paused = true;
          client.pause();
          process.stdout.once('drain', () => {
            paused = false;
            client.resume();
          });
        },
        closed: () => resolve(),
      })
      .catch(reject);
  });
  await closed;
  client.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`paths-bare: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
