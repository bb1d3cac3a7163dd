/**
 * A child process of the host bench: opens N SSE connections to one url (with a bearer token), reads
 * each until it saw `event: closed` (with `binary`: asks for the binary event stream and reads each until
 * its `closed` event frame), and reports on stdout when every reader finished: total bytes, the
 * time from the `go` line on stdin to the last close, and this process's CPU over that time. Readers live here, not in the bench process,
 * so reading costs the same on both sides and the server's process does only serving.
 *
 *   node dist/bench/sse-readers.js URL TOKEN N [binary]      (stdin: `go\n` starts the clock; stdout: JSON lines)
 */
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';

const [url = '', token = '', countText = '1', framing = 'sse'] = process.argv.slice(2);
const count = Number(countText);
const binary = framing === 'binary';
// The binary stream's closed frame: its name's length byte, the name, the start of its data.
const CLOSED = binary ? Buffer.from('\u0006closed{"seq":', 'latin1') : Buffer.from('event: closed\n');
const ACCEPT = binary ? 'application/vnd.exec-rx.events' : 'text/event-stream';

let opened = 0;
let finished = 0;
let bytes = 0;
let started = 0;
let cpuAtGo = process.cpuUsage();

function read(): void {
  const req = request(url, { headers: { authorization: `Bearer ${token}`, accept: ACCEPT }, agent: false }, (res) => {
    opened += 1;
    if (opened === count) process.stdout.write(`${JSON.stringify({ opened })}\n`);
    let tail: Buffer = Buffer.alloc(0);
    res.on('data', (chunk: Buffer) => {
      bytes += chunk.byteLength;
      // The marker may straddle two chunks: look in the end of the last one plus this one.
      const window: Buffer = tail.byteLength === 0 ? chunk : Buffer.concat([tail, chunk.subarray(0, CLOSED.byteLength)]);
      const seen = window.includes(CLOSED) || chunk.includes(CLOSED);
      tail = chunk.subarray(Math.max(0, chunk.byteLength - CLOSED.byteLength));
      if (seen) {
        finished += 1;
        res.destroy();
        if (finished === count) {
          const cpu = process.cpuUsage(cpuAtGo);
          process.stdout.write(`${JSON.stringify({ bytes, ms: performance.now() - started, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
        }
      }
    });
  });
  req.on('error', (error) => {
    process.stderr.write(`reader: ${error.message}\n`);
    process.exitCode = 1;
  });
  req.end();
}

for (let i = 0; i < count; i += 1) read();
process.stdin.setEncoding('utf8');
process.stdin.on('data', (text: string) => {
  if (text.includes('go')) {
    started = performance.now();
    cpuAtGo = process.cpuUsage();
  }
});
process.stdin.on('end', () => process.exit());
