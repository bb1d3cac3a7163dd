/**
 * The host's memory, beside a raw baseline doing the same holding in plain Node, each turn in a fresh
 * process (`../host-memory-child.ts`: RSS after a GC never shrinks back, so deltas need a clean slate):
 * - per idle SSE subscriber: open streams of a process that prints nothing, vs a raw Node server's idle
 *   responses;
 * - per retained MiB: closed processes with 4 MiB of history each, vs the same bytes as 8 KiB Buffers;
 * - one subscriber that reads nothing while 32 MiB stream: the host's 1 MiB send buffer ends that
 *   stream, a raw server buffers everything for it.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { trackChild } from '../lib/executors';
import { figure } from '../lib/report';
import type { Figure } from '../lib/report';
import { interleave, series } from '../lib/stats';
import type { Metrics } from '../lib/stats';

const MiB = 1024 * 1024;

/** Runs one child turn (`storage` `disk`: the host keeps output logs on disk); resolves with its RSS growth in bytes. */
export function childTurn(mode: string, side: 'raw' | 'rx', count: number, storage: 'memory' | 'disk' = 'memory'): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = trackChild(spawn(process.execPath, ['--expose-gc', join(__dirname, '..', 'host-memory-child.js'), mode, side, String(count), storage], { stdio: ['ignore', 'pipe', 'inherit'] }));
    let text = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    child.once('exit', (code) => {
      try {
        const { before, after } = JSON.parse(text) as { before: number; after: number };
        resolve(after - before);
      } catch {
        reject(new Error(`host memory child (${mode} ${side}) exited ${String(code)}: ${text.slice(0, 200)}`));
      }
    });
  });
}

async function paired(context: BenchContext, mode: string, count: number, per: number, metric: string): Promise<Record<'raw' | 'rx', Metrics[]>> {
  const turn = (side: 'raw' | 'rx') => async (): Promise<Metrics> => ({ [metric]: (await childTurn(mode, side, count)) / per });
  return interleave({ raw: turn('raw'), rx: turn('rx') }, { runs: context.runs, between: context.settle, log: context.log });
}

export async function hostMemory(context: BenchContext): Promise<Figure[]> {
  const idle = sized(context, 200, 50);
  const kept = sized(context, 8, 2);
  const streamed = sized(context, 32, 8);
  context.log(`  memory: ${idle} idle streams; ${kept} × 4 MiB retained; ${streamed} MiB past a stalled reader`);
  const idleRuns = await paired(context, 'idle', idle, idle, 'bytesPerStream');
  const retainedRuns = await paired(context, 'retained', kept, kept * 4, 'bytesPerMiB');
  const stalledRuns = await paired(context, 'stalled', streamed, MiB, 'MiB');
  return [
    figure({ suite: 'host', label: `memory: RSS per idle SSE subscriber (${idle} streams)`, unit: 'B', raw: series(idleRuns.raw, 'bytesPerStream'), rx: series(idleRuns.rx, 'bytesPerStream'), note: 'raw: a Node http server holding as many idle responses; fresh process per turn' }),
    figure({ suite: 'host', label: `memory: RSS per retained MiB of history (${kept} closed processes × 4 MiB)`, unit: 'B', raw: series(retainedRuns.raw, 'bytesPerMiB'), rx: series(retainedRuns.rx, 'bytesPerMiB'), note: 'raw: the same bytes kept as 8 KiB Buffers' }),
    figure({ suite: 'host', label: `memory: RSS growth with one subscriber reading nothing while ${streamed} MiB stream`, unit: 'MiB', raw: series(stalledRuns.raw, 'MiB'), rx: series(stalledRuns.rx, 'MiB'), note: "the host's 1 MiB send buffer ends that stream (it resumes by seq); the raw server buffers everything for it" }),
  ];
}
