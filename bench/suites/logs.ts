/**
 * Issue 24: what the host's JSON logs, audit trail and metrics endpoint cost. Host CPU (this process's
 * `process.cpuUsage()`, user + system: the hosts run in process, the SSE reader in a child) per MB of one
 * process's output streamed to one SSE subscriber, on two hosts in the same run, turns interleaved:
 * - off: no log, no audit trail, no metrics endpoint;
 * - on: `exec-rx host`'s own pino JSON logs (src/cli/host-log.ts) to a file, the audit trail with them
 *   (start and stdin end are acts), and `--metrics-port` served and scraped once per turn.
 * A control turn on the off host gives the noise band. Goal: on ≤ 1.03 × off. Both hosts count their
 * metrics (every host does; the flag only serves them): the ratio is logs + audit + the endpoint.
 */
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostLogs } from '../../src/cli/host-log';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import type { BenchHost } from '../lib/host-harness';
import { HOST_ENV, Readers, startBenchHost } from '../lib/host-harness';
import { figure } from '../lib/report';
import type { Figure } from '../lib/report';
import { interleave, series } from '../lib/stats';
import type { Metrics } from '../lib/stats';

const PROCESSES = `/api/v1/environments/${HOST_ENV}/processes`;

async function json(response: Response): Promise<Record<string, unknown>> {
  if (!response.ok) throw new Error(`operator API answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/** One turn: a process waits for `go`, one reader subscribes, then `bytes` of output; CPU ms per MB from go to the reader's end. */
async function cpuTurn(bench: BenchHost, bytes: number, scrape: (() => Promise<void>) | undefined): Promise<Metrics> {
  const started = await json(await bench.api('POST', PROCESSES, { argv: ['sh', '-c', `read go; head -c ${bytes} /dev/zero`], pipeStdin: true }));
  const id = String(started['id']);
  const readers = new Readers(`${bench.host.url}${PROCESSES}/${id}/events`, bench.token, 1);
  try {
    await readers.next();
    const cpu = process.cpuUsage();
    readers.go();
    await json(await bench.api('POST', `${PROCESSES}/${id}/stdin`, { writeId: 'go', data: Buffer.from('go\n').toString('base64') }));
    await bench.api('POST', `${PROCESSES}/${id}/stdin/end`);
    const done = await readers.next();
    await scrape?.();
    const used = process.cpuUsage(cpu);
    const mb = (done['bytes'] ?? 0) / 1e6;
    return { cpuMsPerMb: (used.user + used.system) / 1000 / mb };
  } finally {
    await readers.close();
    await bench.api('DELETE', `${PROCESSES}/${id}`);
  }
}

/** The suite: off, on and a control turn of off, interleaved. */
export async function logsSuite(context: BenchContext): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'exec-rx-bench-logs-'));
  const logFile = createWriteStream(join(dir, 'host.log'));
  const logs = hostLogs({ stderr: logFile, format: 'json', level: 'info', auditFile: undefined });
  const bytes = sized(context, 64 * 1024 * 1024, 4 * 1024 * 1024);
  const outputLog = (name: string): { dataDir: string; totalBytes: number } => ({ dataDir: join(dir, name), totalBytes: 1024 * 1024 * 1024 });
  const off = await startBenchHost(64 * 1024 * 1024, outputLog('off'));
  const on = await startBenchHost(64 * 1024 * 1024, outputLog('on'), { log: logs.log, audit: logs.audit, metricsPort: 0 });
  const metricsUrl = on.host.metricsUrl;
  const scrape = async (): Promise<void> => {
    if (metricsUrl !== undefined) await (await fetch(metricsUrl)).text();
  };
  try {
    context.log(`  host CPU per MB, logs + audit + metrics endpoint on vs off: ${bytes / 1024 / 1024} MiB per turn`);
    const runs = await interleave({ raw: () => cpuTurn(off, bytes, undefined), rx: () => cpuTurn(on, bytes, scrape), ctl: () => cpuTurn(off, bytes, undefined) }, { runs: context.runs, between: context.settle, log: context.log });
    return [
      figure({
        suite: 'logs',
        label: 'host CPU per MB of output to one SSE reader: JSON logs + audit + metrics endpoint on (exec-rx column) vs off (raw column)',
        unit: 'CPU ms/MB',
        raw: series(runs.raw, 'cpuMsPerMb'),
        rx: series(runs.rx, 'cpuMsPerMb'),
        ctl: series(runs.ctl, 'cpuMsPerMb'),
        ratioGoal: { max: 1.03 },
        note: 'both hosts in this process with output logs on disk; both count metrics (every host does), the on host also serves them and is scraped once per turn; the SSE reader runs in a child process',
      }),
    ];
  } finally {
    await on.close();
    await off.close();
    logFile.end();
    rmSync(dir, { recursive: true, force: true });
  }
}
