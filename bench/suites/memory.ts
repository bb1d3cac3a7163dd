/**
 * 5. Memory, each turn in a fresh `node --expose-gc` process (see `../memory-child.ts`): resident memory
 * growth over idle while streaming 100 MB (exec-rx through `events$`, history at its bound), and the
 * memory each of 1,000 finished, kept processes costs.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { trackChild, withListening } from '../lib/executors';
import { figure } from '../lib/report';
import type { Row } from '../lib/report';
import { interleave, series } from '../lib/stats';
import type { Metrics } from '../lib/stats';

const MIB = 1024 * 1024;

function probe(mode: string, url: string, amount: number): Promise<Metrics> {
  return new Promise<Metrics>((resolve, reject) => {
    const child = trackChild(spawn(process.execPath, ['--expose-gc', join(__dirname, '..', 'memory-child.js'), mode, url, String(amount)], { stdio: ['ignore', 'pipe', 'pipe'] }));
    let out = '';
    let err = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) {
        reject(new Error(`memory probe ${mode} exited with ${String(code)}: ${err.trim()}`));
        return;
      }
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as Metrics);
      } catch (error) {
        reject(new Error(`memory probe ${mode} printed ${JSON.stringify(out)}`, { cause: error }));
      }
    });
  });
}

export async function memorySuite(context: BenchContext): Promise<Row[]> {
  const bytes = sized(context, 100_000_000, 20_000_000);
  const count = sized(context, 1_000, 200);
  return withListening(1, async ([url = '']) => {
    context.log(`  streaming ${bytes / 1e6} MB`);
    const stream = await interleave(
      { raw: () => probe('stream-raw', url, bytes), rx: () => probe('stream-rx', url, bytes), ctl: () => probe('stream-raw', url, bytes) },
      { runs: context.runs, warmup: 0, log: context.log },
    );
    context.log(`  ${count} finished processes kept`);
    const procs = await interleave(
      { raw: () => probe('procs-raw', url, count), rx: () => probe('procs-rx', url, count), ctl: () => probe('procs-raw', url, count) },
      { runs: context.runs, warmup: 0, log: context.log },
    );
    const mib = (values: number[]): number[] => values.map((v) => v / MIB);
    return [
      figure({
        suite: 'memory',
        label: `RSS growth over idle, streaming ${bytes / 1e6} MB (history at its bound)`,
        unit: 'MiB',
        raw: mib(series(stream.raw, 'growth')),
        rx: mib(series(stream.rx, 'growth')),
        ctl: mib(series(stream.ctl, 'growth')),
        diffGoal: { max: 4 },
        note: `idle RSS (min–max): raw ${(Math.min(...series(stream.raw, 'idleRss')) / MIB).toFixed(1)}–${(Math.max(...series(stream.raw, 'idleRss')) / MIB).toFixed(1)} MiB, exec-rx ${(Math.min(...series(stream.rx, 'idleRss')) / MIB).toFixed(1)}–${(Math.max(...series(stream.rx, 'idleRss')) / MIB).toFixed(1)} MiB`,
      }),
      figure({
        suite: 'memory',
        label: `${count} finished processes kept: heap + external per process`,
        unit: 'B',
        raw: series(procs.raw, 'bytesPerProcess'),
        rx: series(procs.rx, 'bytesPerProcess'),
        ctl: series(procs.ctl, 'bytesPerProcess'),
        ratioGoal: { max: 1.5 },
        note: 'each process ran `/bin/echo hello` (output, exited, closed); raw keeps every event with its decoded chunk, exec-rx keeps the ExecProcess (history not released)',
      }),
      figure({
        suite: 'memory',
        label: `${count} finished processes kept: RSS per process`,
        unit: 'B',
        raw: series(procs.raw, 'rssPerProcess'),
        rx: series(procs.rx, 'rssPerProcess'),
        ctl: series(procs.ctl, 'rssPerProcess'),
      }),
    ];
  });
}
