// Issue 40: which way of reading an HTTP body piles dead ArrayBuffers up (docs/performance.md, "The CLI's
// scavenge on the binary path: what was ruled out"). Run: node bench/results/issue-40-read-paths.cjs <variant> [runs]
// variants: fetch fetch-gc byob byob-nocopy http-iter http-read net-onread. Linux only (/proc/self).
const http = require('node:http'), net = require('node:net'), fs = require('node:fs');
const { spawn } = require('node:child_process');
const { PerformanceObserver, constants } = require('node:perf_hooks');
const TOTAL = 60_000_000, WARM = 4_000_000, MiB = 1048576;
if (process.argv[2] === 'child') child(process.argv[3], Number(process.argv[4])); else parent(process.argv[2], Number(process.argv[3] ?? 1));

function parent(variant, runs) {
  const block = Buffer.alloc(64 * 1024, 'y');
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    let sent = 0;
    const more = () => { while (sent < TOTAL) { sent += block.length; if (!res.write(block)) return res.once('drain', more); } res.end(); };
    more();
  }).listen(0, '127.0.0.1', async () => {
    const results = [];
    for (let i = 0; i < runs; i++) results.push(await once(variant, server.address().port));
    console.log(variant, results.map((r) => r.trim()).join(' | '));
    server.close();
  });
}
function once(variant, port) {
  return new Promise((resolve) => {
    const args = variant === 'fetch-gc' ? ['--expose-gc', __filename, 'child', variant, port] : [__filename, 'child', variant, port];
    const c = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = ''; c.stderr.on('data', (d) => (err += d));
    let got = 0; c.stdout.pause();
    const tick = setInterval(() => { let taken = 0; let b; while (taken < 500_000 && (b = c.stdout.read()) !== null) { taken += b.length; } got += taken; }, 50);
    c.on('close', () => { clearInterval(tick); resolve(`${err.trim()} recv=${(got / 1e6).toFixed(0)}MB`); });
  });
}
function child(variant, port) {
  const counts = {}; const kinds = { 1: 'minor', 2: 'major', 4: 'incr', 8: 'weak' };
  new PerformanceObserver((l) => { for (const e of l.getEntries()) counts[kinds[e.detail.kind]] = (counts[kinds[e.detail.kind]] ?? 0) + 1; }).observe({ entryTypes: ['gc'] });
  let written = 0, base = 0, maxAb = 0, sinceGc = 0;
  const status = () => fs.readFileSync('/proc/self/status', 'utf8');
  const kib = (s, n) => Number(new RegExp(`^${n}:\\s+(\\d+) kB$`, 'm').exec(s)[1]) * 1024;
  const out = process.stdout;
  // write, and call next() when it may go on (below a 256 KiB mark: go on; else on drain)
  const write = (chunk, next) => {
    written += chunk.byteLength;
    if (written >= WARM && base === 0) { fs.writeFileSync('/proc/self/clear_refs', '5'); base = kib(status(), 'VmRSS'); }
    if (base !== 0) maxAb = Math.max(maxAb, process.memoryUsage().arrayBuffers);
    if (variant === 'fetch-gc' && (sinceGc += chunk.byteLength) >= 4 * MiB) { sinceGc = 0; gc({ type: 'minor' }); }
    out.write(chunk);
    if (out.writableLength > 256 * 1024) out.once('drain', next); else next();
  };
  const done = () => { const s = status(); process.stderr.write(`peak+${((kib(s, 'VmHWM') - base) / MiB).toFixed(1)}MiB maxAB=${(maxAb / MiB).toFixed(1)}MiB gcs=${JSON.stringify(counts)}`); };
  const url = `http://127.0.0.1:${port}/`;
  const step = () => new Promise((r) => setImmediate(r));
  const wrote = (chunk) => new Promise((r) => write(chunk, r));
  (async () => {
    if (variant === 'fetch' || variant === 'fetch-gc') {
      const reader = (await fetch(url)).body.getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) await wrote(r.value);
    } else if (variant === 'byob') {
      const reader = (await fetch(url)).body.getReader({ mode: 'byob' });
      let buf = new Uint8Array(64 * 1024);
      for (;;) { const r = await reader.read(buf); if (r.done) break; await wrote(Buffer.from(r.value)); /* copy: buf is reused */ buf = new Uint8Array(r.value.buffer, 0, 64 * 1024); }
    } else if (variant === 'byob-nocopy') {
      const reader = (await fetch(url)).body.getReader({ mode: 'byob' });
      let buf = new Uint8Array(64 * 1024);
      for (;;) { const r = await reader.read(buf); if (r.done) break; await new Promise((res) => { written += r.value.byteLength; if (base !== 0) maxAb = Math.max(maxAb, process.memoryUsage().arrayBuffers); else if (written >= WARM) { fs.writeFileSync('/proc/self/clear_refs', '5'); base = kib(status(), 'VmRSS'); } out.write(r.value, () => res()); }); buf = new Uint8Array(r.value.buffer, 0, 64 * 1024); }
    } else if (variant === 'http-iter') {
      const res = await new Promise((r) => http.get(url, r));
      for await (const chunk of res) await wrote(chunk);
    } else if (variant === 'http-read') {
      const res = await new Promise((r) => http.get(url, r));
      await new Promise((resolve) => { res.on('end', resolve); const pump = () => { const c = res.read(); if (c === null) return res.once('readable', pump); write(c, pump); }; pump(); });
    } else if (variant === 'net-onread') {
      // zero-allocation control: one reused buffer, the socket paused until each write is flushed
      const buffer = Buffer.alloc(64 * 1024); let headers = true;
      await new Promise((resolve) => {
        const sock = net.connect({ host: '127.0.0.1', port, onread: { buffer, callback: (n, b) => {
          let chunk = b.subarray(0, n);
          if (headers) { const at = chunk.indexOf('\r\n\r\n'); if (at < 0) return; headers = false; chunk = chunk.subarray(at + 4); }
          // chunked encoding framing is ignored in the control (counts only bytes)
          written += chunk.byteLength;
          if (written >= WARM && base === 0) { fs.writeFileSync('/proc/self/clear_refs', '5'); base = kib(status(), 'VmRSS'); }
          if (base !== 0) maxAb = Math.max(maxAb, process.memoryUsage().arrayBuffers);
          out.write(chunk, () => sock.resume());
          return false;
        } } }, () => sock.write('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'));
        sock.on('end', resolve);
      });
    }
    done();
  })();
}
