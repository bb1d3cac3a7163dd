/**
 * Where a host's CPU goes while it serves one process's output to one SSE reader: the profile behind
 * the disklog suite's "one reader through the host vs the library" figure.
 *
 *   npm run build && node --cpu-prof --cpu-prof-dir=DIR dist/bench/profile-one-reader.js [disk|memory] [BYTES] [TURNS]
 *   node dist/bench/profile-one-reader.js --summarize DIR/<file>.cpuprofile
 *
 * The first form runs TURNS turns (default 4) of BYTES (default 100 MB) through a bench host (with a
 * temporary data dir for `disk`, the default) to one reader in a child process, printing each turn's
 * rate, the host's CPU and its disk pauses. The second sums the samples of a profile by where they
 * were spent (walking up from each sample to the first frame a rule names) as a markdown table.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOST_ENV, Readers, startBenchHost } from './lib/host-harness';
import { stopEverything } from './lib/executors';

const PROCESSES = `/api/v1/environments/${HOST_ENV}/processes`;

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
}
interface CpuProfile {
  readonly nodes: readonly { readonly id: number; readonly callFrame: CallFrame; readonly children?: readonly number[] }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Where a sample is counted: the first rule that names a frame on its stack, from the leaf up. */
const RULES: ReadonlyArray<readonly [string, (frame: CallFrame) => boolean]> = [
  ['idle (waiting for I/O)', (f) => f.functionName === '(idle)'],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['SSE socket writes (writev to the reader: the kernel copy, loopback TCP)', (f) => f.functionName === 'writev' || /stream_base_commons|_http_outgoing|api\/sse\.js|node:net|writable/.test(f.url)],
  ['output log: copy, CRC32, write, index, reads', (f) => /host\/log\//.test(f.url) || f.functionName === 'crc32' || f.functionName === 'writeBuffer' || f.functionName === 'writeBuffers'],
  ['SSE frames: base64 encode, framing, the reader pump', (f) => /event-frames|log-event-stream|process-event-stream/.test(f.url) || f.functionName === 'base64Slice' || f.functionName === 'latin1Write'],
  ['JSON.parse of executor frames', (f) => f.functionName === 'tryParseJson'],
  ['base64 decode of executor chunks', (f) => /wire\/base64|chunk-arena/.test(f.url) || f.functionName === 'base64Write'],
  ['ws receive (frame parsing, unmask)', (f) => /node_modules\/ws\//.test(f.url)],
  ['routing, inbox, history (rxjs included)', (f) => /\/(rpc|exec|wire)\/|rxjs/.test(f.url)],
];

function summarize(path: string): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const sums = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((sample, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    total += delta;
    let label = 'other (Node internals, timers, the bench harness)';
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)?.callFrame;
      const rule = frame === undefined ? undefined : RULES.find(([, matches]) => matches(frame));
      if (rule !== undefined) {
        label = rule[0];
        break;
      }
    }
    sums.set(label, (sums.get(label) ?? 0) + delta);
  });
  const rows = [...sums].sort((a, b) => b[1] - a[1]).map(([label, us]) => `| ${label} | ${(us / 1000).toFixed(0)} | ${((100 * us) / total).toFixed(1)} % |`);
  return ['| where | ms | share of samples |', '|---|---|---|', ...rows, `| total | ${(total / 1000).toFixed(0)} | 100 % |`].join('\n');
}

async function run(storage: string, bytes: number, turns: number): Promise<void> {
  const dataDir = storage === 'disk' ? mkdtempSync(join(tmpdir(), 'exec-rx-profile-')) : undefined;
  const bench = await startBenchHost(64 * 1024 * 1024, dataDir === undefined ? undefined : { dataDir, totalBytes: 1024 * 1024 * 1024 });
  try {
    for (let turn = 1; turn <= turns; turn += 1) {
      const started = (await (await bench.api('POST', PROCESSES, { argv: ['sh', '-c', `read go; head -c ${bytes} /dev/zero`], pipeStdin: true })).json()) as { readonly id?: string };
      const id = String(started.id);
      const readers = new Readers(`${bench.host.url}${PROCESSES}/${id}/events`, bench.token, Number(process.env['READERS'] ?? 1));
      await readers.next();
      const cpu0 = process.cpuUsage();
      const pauses0 = bench.host.monitor.facts().diskPauses;
      readers.go();
      await bench.api('POST', `${PROCESSES}/${id}/stdin`, { writeId: 'go', data: Buffer.from('go\n').toString('base64') });
      const done = await readers.next();
      const cpu = process.cpuUsage(cpu0);
      const seconds = (done['ms'] ?? 1) / 1000;
      process.stdout.write(`${JSON.stringify({ turn, outputMBps: bytes / 1e6 / seconds, sseMBps: (done['bytes'] ?? 0) / 1e6 / seconds, hostCpuMsPerMB: (cpu.user + cpu.system) / 1000 / (bytes / 1e6), diskPauses: bench.host.monitor.facts().diskPauses - pauses0 })}\n`);
      await readers.close();
      await bench.api('DELETE', `${PROCESSES}/${id}`);
    }
  } finally {
    await bench.close();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
if (args[0] === '--summarize') {
  process.stdout.write(`${summarize(args[1] ?? '')}\n`);
} else {
  run(args[0] ?? 'disk', Number(args[1] ?? 100_000_000), Number(args[2] ?? 4)).then(
    async () => {
      await stopEverything();
      process.exit(0);
    },
    async (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      await stopEverything();
      process.exit(1);
    },
  );
}
