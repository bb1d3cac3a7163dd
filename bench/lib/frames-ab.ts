/**
 * A paired A/B of two builds' clients on the frames harness (issue 32: the 128 B frame), with the harness
 * frozen: this build's `dist/bench` is copied twice, each copy's `src` a link to one build's `dist/src`,
 * and each side runs in a process of its own (`frames-ab-child.ts`) against one synthetic peer
 * (`../peer.ts`). Each pair gives both sides one turn per chunk size, the order alternating from pair to
 * pair; a sitting is a fresh peer and fresh children with one discarded warm-up pair. Prints, per chunk
 * size, frames/s and CPU per frame of each side and the paired ratios B / A, per sitting and over all
 * pairs, as markdown (and writes it to `--out`).
 *
 *   node dist/bench/lib/frames-ab.js --a=LABEL:DIST --b=LABEL:DIST [--sittings=3] [--pairs=15] [--out=FILE]
 *     [--frames128=300000] [--frames8k=24000] [--only128]
 *
 * `DIST` is a build's `dist` directory. Run it under the bench lock (`flock /tmp/exec-rx-bench.lock …`).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Interface } from 'node:readline';
import { stopEverything, trackChild } from './executors';
import { withSyntheticPeer } from './peer-process';
import { formatNumber, pairwise, summarize } from './stats';
import type { Summary } from './stats';

interface Side {
  readonly label: string;
  readonly copy: string;
}

interface Case {
  readonly chunk: number;
  readonly frames: number;
  readonly label: string;
}

type Sample = { readonly fps: number; readonly cpuUs: number };
/** Per case label, per side (0: A, 1: B), per sitting: the samples in pair order. */
type Results = Map<string, [Sample[][], Sample[][]]>;

const flag = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const count = (name: string, fallback: number): number => {
  const value = Number(flag(name) ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`bad --${name}`);
  return value;
};

/** A copy of this build's `dist/bench` whose `src` is `dist`'s: the frozen harness on that build. */
function harnessCopy(spec: string, root: string, index: number): Side {
  const colon = spec.indexOf(':');
  if (colon <= 0) throw new Error(`expected LABEL:DIST, got ${spec}`);
  const copy = join(root, String(index));
  cpSync(join(__dirname, '..'), join(copy, 'bench'), { recursive: true });
  symlinkSync(resolve(spec.slice(colon + 1), 'src'), join(copy, 'src'));
  return { label: spec.slice(0, colon), copy };
}

/** A running side: one turn per request line, one JSON answer line each. */
class Child {
  private readonly child: ChildProcess;
  private readonly lines: Interface;
  private readonly queue: string[] = [];
  private wake: (() => void) | undefined;

  constructor(side: Side, url: string) {
    this.child = trackChild(spawn(process.execPath, ['--expose-gc', join(side.copy, 'bench', 'lib', 'frames-ab-child.js'), url], { stdio: ['pipe', 'pipe', 'inherit'] }));
    if (this.child.stdout === null) throw new Error('no stdout');
    this.lines = createInterface({ input: this.child.stdout });
    this.lines.on('line', (line) => {
      this.queue.push(line);
      this.wake?.();
    });
    this.child.once('exit', () => this.wake?.());
  }

  async line(): Promise<string> {
    for (;;) {
      const next = this.queue.shift();
      if (next !== undefined) return next;
      if (this.child.exitCode !== null) throw new Error('an A/B child exited');
      await new Promise<void>((done) => (this.wake = done));
    }
  }

  async turn(c: Case): Promise<Sample> {
    this.child.stdin?.write(`${c.chunk} ${c.frames}\n`);
    const answer = JSON.parse(await this.line()) as Sample & { error?: string };
    if (answer.error !== undefined) throw new Error(answer.error);
    return answer;
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((done) => (this.child.exitCode === null ? this.child.once('exit', () => done()) : done()));
    this.child.stdin?.end();
    await exited;
    this.lines.close();
  }
}

async function sitting(sides: readonly [Side, Side], cases: readonly Case[], pairs: number, results: Results, log: (line: string) => void): Promise<void> {
  await withSyntheticPeer(async (url) => {
    const children = [new Child(sides[0], url), new Child(sides[1], url)] as const;
    try {
      await Promise.all(children.map(async (child) => expectReady(await child.line())));
      for (let pair = -1; pair < pairs; pair += 1) {
        const order: readonly (0 | 1)[] = pair % 2 === 0 ? [0, 1] : [1, 0];
        const parts: string[] = [];
        for (const c of cases) {
          for (const side of order) {
            const sample = await children[side].turn(c);
            if (pair >= 0) results.get(c.label)?.[side].at(-1)?.push(sample);
            parts.push(`${c.label} ${sides[side].label} ${formatNumber(sample.fps)} f/s ${formatNumber(sample.cpuUs)} µs`);
          }
        }
        log(`  ${pair < 0 ? 'warm-up' : `pair ${pair + 1}/${pairs}`}: ${parts.join(' | ')}`);
      }
    } finally {
      await Promise.all(children.map((child) => child.close()));
    }
  });
}

function expectReady(line: string): void {
  if (line !== 'ready') throw new Error(`an A/B child said ${line}`);
}

const cell = (s: Summary): string => `${formatNumber(s.median)} [${formatNumber(s.min)}–${formatNumber(s.max)}]`;

/** The markdown rows of one case: per sitting and over all, frames/s and CPU per frame of A and B, and the paired ratios B / A. */
function table(sides: readonly [Side, Side], c: Case, [a, b]: [Sample[][], Sample[][]]): string[] {
  const rows = [
    `### ${c.label} chunks (${c.frames} frames per turn)`,
    '',
    `| sitting | ${sides[0].label} frames/s | ${sides[1].label} frames/s | frames/s ${sides[1].label} / ${sides[0].label} | ${sides[0].label} CPU µs/frame | ${sides[1].label} CPU µs/frame | CPU ${sides[1].label} / ${sides[0].label} |`,
    '|---|---|---|---|---|---|---|',
  ];
  const line = (name: string, as: readonly Sample[], bs: readonly Sample[]): string => {
    const fa = as.map((s) => s.fps);
    const fb = bs.map((s) => s.fps);
    const ca = as.map((s) => s.cpuUs);
    const cb = bs.map((s) => s.cpuUs);
    const ratio = (x: number, y: number): number => x / y;
    return `| ${name} (${as.length} pairs) | ${cell(summarize(fa))} | ${cell(summarize(fb))} | ${cell(summarize(pairwise(fb, fa, ratio)))} | ${cell(summarize(ca))} | ${cell(summarize(cb))} | ${cell(summarize(pairwise(cb, ca, ratio)))} |`;
  };
  a.forEach((as, i) => rows.push(line(String(i + 1), as, b[i] ?? [])));
  rows.push(line('all', a.flat(), b.flat()));
  return rows;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(__dirname, '..', '..', '..', '.frames-ab-'));
  try {
    const sides = [harnessCopy(flag('a') ?? '', root, 0), harnessCopy(flag('b') ?? '', root, 1)] as const;
    const cases: Case[] = [{ chunk: 128, frames: count('frames128', 300_000), label: '128 B' }];
    if (!process.argv.includes('--only128')) cases.push({ chunk: 8192, frames: count('frames8k', 24_000), label: '8 KiB' });
    const sittings = count('sittings', 3);
    const pairs = count('pairs', 15);
    const results: Results = new Map(cases.map((c) => [c.label, [[], []]]));
    const loads: string[] = [];
    const log = (line: string): void => void process.stderr.write(`${line}\n`);
    for (let s = 0; s < sittings; s += 1) {
      for (const [a, b] of results.values()) {
        a.push([]);
        b.push([]);
      }
      const before = loadavg()[0] ?? Number.NaN;
      log(`sitting ${s + 1}/${sittings} (load average ${before.toFixed(2)})`);
      await sitting(sides, cases, pairs, results, log);
      loads.push(`${before.toFixed(2)}→${(loadavg()[0] ?? Number.NaN).toFixed(2)}`);
    }
    const lines = [`A = ${sides[0].label}, B = ${sides[1].label}; ${sittings} sittings × ${pairs} pairs, order alternating; 1-min load average per sitting: ${loads.join(', ')}.`, ''];
    for (const c of cases) lines.push(...table(sides, c, results.get(c.label) ?? [[], []]), '');
    const text = lines.join('\n');
    process.stdout.write(`${text}\n`);
    const out = flag('out');
    if (out !== undefined) writeFileSync(out, `${text}\n`);
  } finally {
    await stopEverything();
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`frames-ab failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
