/**
 * 10. A host restart (issue 21), `--only=restart`: the built `exec-rx host --data-dir` (a child process)
 * with a direct executor and a process printing a line every 20 ms; the host is SIGKILLed and started
 * again on the same data dir at once. Per turn (a fresh data dir, host and executor each): the time from
 * the SIGKILL to the first output byte a reader gets from the restarted host after the last seq it had,
 * split into what makes it up, from the restarted host's own log lines:
 * - start: SIGKILL → the new host listening (loading its state and logs, binding the port);
 * - re-dial: listening → the executor's upgrade accepted (`generation 1: starting`): its backoff, 0.5–0.75 s
 *   for the first re-dial (docs/protocol.md#direct-remote-transport). The host kept the registration (its
 *   token digest in the data dir), so the url the executor re-dials is still good: no 409, no re-registration;
 * - resume: that upgrade → the session taken back (initialize with resumeSessionId, the recovery reads);
 * - first byte: taken back → the reader's first new byte (its reconnect and the log read).
 * Median [min–max] of the turns; no goal (the issue asks to name what dominates).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { spawnExecutor } from '../../src/executor/spawn-executor';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { stopExecutor, trackChild } from '../lib/executors';
import type { Check, Row } from '../lib/report';
import { summarize } from '../lib/stats';

const CLI = join(__dirname, '..', '..', 'src', 'cli', 'main.js');
const ENV = 'bench-restart';

/** A host child: its stderr lines with the time each arrived, and waits on them. */
class HostChild {
  readonly child: ChildProcess;
  readonly lines: { readonly at: number; readonly text: string }[] = [];
  private stdout = '';
  private wake: (() => void) | undefined;

  constructor(dataDir: string, env: NodeJS.ProcessEnv) {
    this.child = trackChild(spawn(process.execPath, [CLI, 'host', '--port', '0', '--data-dir', dataDir], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
    let partial = '';
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      partial += chunk;
      for (let newline = partial.indexOf('\n'); newline >= 0; newline = partial.indexOf('\n')) {
        this.lines.push({ at: performance.now(), text: partial.slice(0, newline) });
        partial = partial.slice(newline + 1);
      }
      this.wake?.();
    });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      this.wake?.();
    });
  }

  /** Resolves with the time the first stderr line containing `text` arrived; rejects after 60 s or when the host exits. */
  async line(text: string): Promise<number> {
    const deadline = performance.now() + 60_000;
    for (;;) {
      const found = this.lines.find((line) => line.text.includes(text));
      if (found !== undefined) return found.at;
      if (this.child.exitCode !== null || performance.now() > deadline) throw new Error(`the bench host never said "${text}"`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 200);
      });
    }
  }

  /** The url the host listens on, once it printed it, and the time it did. */
  async listening(): Promise<{ readonly url: string; readonly at: number }> {
    const deadline = performance.now() + 60_000;
    for (;;) {
      const url = /^exec-rx host listening on (\S+)$/m.exec(this.stdout)?.[1];
      if (url !== undefined) return { url, at: performance.now() };
      if (this.child.exitCode !== null || performance.now() > deadline) throw new Error(`the bench host did not listen: ${this.stdout}`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 50);
      });
    }
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill(signal);
    await exited;
  }
}

async function api(url: string, token: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}`);
  return (await response.json()) as Record<string, unknown>;
}

/** Resolves with the time the first `output` event after `afterSeq` arrives from `url`, and its seq; retries refused connections until then. */
async function firstOutputAfter(url: string, token: string, afterSeq: number): Promise<{ readonly at: number; readonly seq: number }> {
  const deadline = performance.now() + 60_000;
  for (;;) {
    const at = await new Promise<{ readonly at: number; readonly seq: number } | undefined>((resolve) => {
      const req = request(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'last-event-id': String(afterSeq) }, agent: false }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return resolve(undefined);
        }
        res.setEncoding('utf8').on('data', (text: string) => {
          const seq = /id: (\d+)\nevent: output/.exec(text)?.[1];
          if (seq === undefined) return;
          resolve({ at: performance.now(), seq: Number(seq) });
          req.destroy();
        });
        res.once('end', () => resolve(undefined));
      });
      req.once('error', () => resolve(undefined));
      req.end();
    });
    if (at !== undefined) return at;
    if (performance.now() > deadline) throw new Error('no output after the restart within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Split {
  readonly total: number;
  readonly start: number;
  readonly redial: number;
  readonly resume: number;
  readonly firstByte: number;
}

async function turn(): Promise<Split> {
  const work = mkdtempSync(join(tmpdir(), 'exec-rx-bench-restart-'));
  const credentials = { accessKeyId: 'BENCHRESTART', secretAccessKey: randomBytes(24).toString('base64url') };
  const token = randomBytes(24).toString('base64url');
  const env = { ...process.env, XDG_STATE_HOME: work, EXEC_RX_ACCESS_KEY_ID: credentials.accessKeyId, EXEC_RX_SECRET_ACCESS_KEY: credentials.secretAccessKey, EXEC_RX_OPERATOR_TOKEN: token };
  const dataDir = join(work, 'data');
  const first = new HostChild(dataDir, env);
  let second: HostChild | undefined;
  const { url } = await first.listening();
  const executor = await spawnExecutor({ mode: 'direct', remoteUrl: url, environmentId: ENV, credentials });
  try {
    await first.line(`environment ${ENV} generation 1: connected`);
    const processes = `/api/v1/environments/${ENV}/processes`;
    const started = await api(url, token, 'POST', processes, { argv: ['sh', '-c', 'i=0; while [ $i -lt 100000 ]; do echo line $i; i=$((i+1)); sleep 0.02; done'] });
    const events = `${url}${processes}/${String(started['id'])}/events`;
    const { seq: afterSeq } = await firstOutputAfter(events, token, 5); // a few lines in
    const killedAt = performance.now();
    await first.kill('SIGKILL');
    second = new HostChild(dataDir, env);
    const listening = (await second.listening()).at;
    const dialled = await second.line(`environment ${ENV} generation 1: starting`);
    const taken = await second.line(`environment ${ENV}: session `);
    const firstByte = (await firstOutputAfter(events, token, afterSeq)).at;
    if (second.lines.some((line) => line.text.includes('(409'))) throw new Error('the restarted host answered 409: it lost the registration');
    return { total: firstByte - killedAt, start: listening - killedAt, redial: dialled - listening, resume: taken - dialled, firstByte: firstByte - taken };
  } finally {
    await second?.kill('SIGTERM');
    await first.kill('SIGKILL');
    await stopExecutor(executor);
    rmSync(work, { recursive: true, force: true });
  }
}

/** The whole suite. */
export async function restartSuite(context: BenchContext): Promise<Row[]> {
  const turns = sized(context, Math.max(5, context.runs), 3);
  context.log(`  restart: ${turns} turns of SIGKILL and restart under a streaming process`);
  const splits: Split[] = [];
  for (let i = 0; i < turns; i += 1) {
    splits.push(await turn());
    context.log(`    turn ${i + 1}: ${JSON.stringify(splits[splits.length - 1], (_k, v: unknown) => (typeof v === 'number' ? Math.round(v) : v))}`);
  }
  const row = (label: string, key: keyof Split): Check => {
    const s = summarize(splits.map((split) => split[key]));
    return { kind: 'check', suite: 'restart', label, value: `${Math.round(s.median)} ms [${Math.round(s.min)}–${Math.round(s.max)}]`, goal: 'reported', met: true };
  };
  return [
    row('SIGKILL of the host → first output byte after it is back (a reader resuming by seq)', 'total'),
    row('  of which: the new host starting (SIGKILL → listening: loading its state and logs)', 'start'),
    row('  of which: the executor re-dialling (listening → its upgrade accepted: its backoff; no 409, the registration was kept)', 'redial'),
    row('  of which: the resume (that upgrade → the session taken back: initialize, recovery reads)', 'resume'),
    row('  of which: the reader reconnecting and reading the log (taken back → first byte)', 'firstByte'),
  ];
}
