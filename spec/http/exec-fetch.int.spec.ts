/** Environment.fetch against the real executor, to a python3 HTTP server the executor itself runs on 127.0.0.1. */
import '../support/executor';
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { firstValueFrom } from 'rxjs';
import { filter, take } from 'rxjs/operators';
import type { ExecProcess } from '../../src';
import { HttpBodyError, HttpTargetRefusedError, RpcError } from '../../src';
import { linesOf } from '../../src/exec/output-views';
import { useListeningEnvironment } from '../support/listening-environment';

/** The target: /big (5 MiB, content-length), /echo (POST echoed), /trickle (five events 300 ms apart), /reset (RST mid-body), redirects. Prints `ready` once bound. */
const SERVER = `
import http.server, socket, struct, sys, time
BLOCK = bytes(range(256)) * 4096
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args): pass
    def answer(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers: self.send_header(name, value)
        self.send_header('content-length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        if self.path == '/hello': return self.answer(200, b'hello')
        if self.path == '/go': return self.answer(302, b'moved', [('location', '/hello')])
        if self.path == '/away': return self.answer(302, b'moved', [('location', 'http://localhost:%d/hello' % PORT)])
        if self.path == '/big':
            self.send_response(200)
            self.send_header('content-length', str(5 * len(BLOCK)))
            self.end_headers()
            for _ in range(5): self.wfile.write(BLOCK)
            return
        if self.path == '/trickle':
            self.send_response(200)
            self.send_header('content-type', 'text/event-stream')
            self.end_headers()
            for i in range(5):
                self.wfile.write(b'data: %d\\n\\n' % i)
                self.wfile.flush()
                time.sleep(0.3)
            return
        if self.path == '/reset':
            self.send_response(200)
            self.send_header('content-length', '1000000')
            self.end_headers()
            self.wfile.write(b'x' * 1000)
            self.wfile.flush()
            time.sleep(0.2)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
            self.connection.close()
            return
        self.answer(404, b'no')
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('content-length', '0')))
        self.answer(200, body, [('x-method', self.command), ('x-type', self.headers.get('content-type', ''))])
PORT = int(sys.argv[1])
server = http.server.ThreadingHTTPServer(('127.0.0.1', PORT), H)
print('ready', flush=True)
server.serve_forever()
`;

/** A loopback port nothing listens on (bound, then closed). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Reads a body to its end; each piece with the time it came. */
async function pieces(response: Response): Promise<{ readonly chunks: Buffer[]; readonly at: number[] }> {
  const reader = response.body?.getReader();
  const chunks: Buffer[] = [];
  const at: number[] = [];
  if (reader === undefined) return { chunks, at };
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    chunks.push(Buffer.from(read.value));
    at.push(Date.now());
  }
  return { chunks, at };
}

describe('Environment.fetch against the real executor', () => {
  const env = useListeningEnvironment('fetch-1');
  // Nested, so the server's afterAll (terminate it and wait for its exit) runs before the manager closes.
  describe('to a python3 server the executor runs', () => {
    let server: ExecProcess | undefined;
    let base = '';

    beforeAll(async () => {
      const port = await closedPort();
      base = `http://127.0.0.1:${port}`;
      const started = await env.backend.start({ argv: ['python3', '-u', '-c', SERVER, String(port)], cwd: tmpdir() });
      server = started.process;
      // Bound once it printed `ready` (a server that exits first rejects this: its events end without the line).
      await firstValueFrom(started.process.events$.pipe(linesOf('stdout'), filter((line) => line === 'ready'), take(1)));
    });
    afterAll(async () => {
      await server?.terminate();
      await server?.wait();
    });

    it('streams a 5 MiB GET body in order (sha256-equal)', async () => {
      const response = await env.environment.fetch(`${base}/big`);
      expect(response.status).toBe(200);
      const { chunks } = await pieces(response);
      const expected = Buffer.concat(new Array<Buffer>(5 * 4096).fill(Buffer.from(Array.from({ length: 256 }, (_, i) => i))));
      const body = Buffer.concat(chunks);
      expect(body.length).toBe(5 * 1024 * 1024);
      expect(createHash('sha256').update(body).digest('hex')).toBe(createHash('sha256').update(expected).digest('hex'));
    });

    it('delivers a POST body to the target', async () => {
      const sent = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
      const response = await env.environment.fetch(`${base}/echo`, { method: 'POST', body: sent, headers: { 'content-type': 'application/x-spec' } });
      expect({ method: response.headers.get('x-method'), type: response.headers.get('x-type') }).toEqual({ method: 'POST', type: 'application/x-spec' });
      expect(Buffer.compare(Buffer.from(await response.arrayBuffer()), sent)).toBe(0);
    });

    it('hands over an SSE-like trickle piece by piece, before the body ends', async () => {
      const response = await env.environment.fetch(`${base}/trickle`, { timeoutMs: 10_000 });
      const { chunks, at } = await pieces(response);
      expect(Buffer.concat(chunks).toString()).toBe('data: 0\n\ndata: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\n');
      expect(chunks.length).toBeGreaterThanOrEqual(4);
      expect((at[at.length - 1] ?? 0) - (at[0] ?? 0)).toBeGreaterThan(800);
    });

    it('errors the body stream (no hang) when the target resets the connection mid-body', async () => {
      const response = await env.environment.fetch(`${base}/reset`, { timeoutMs: 10_000 });
      expect(response.status).toBe(200);
      const reader = response.body?.getReader();
      let received = 0;
      const failure = await (async () => {
        try {
          for (let read = await reader?.read(); read !== undefined && !read.done; read = await reader?.read()) received += read.value.byteLength;
        } catch (error: unknown) {
          return error;
        }
        return undefined;
      })();
      expect(failure).toBeInstanceOf(HttpBodyError);
      expect(received).toBeLessThan(1_000_000);
    });

    it('rejects with RpcError -32603 for a port nothing listens on', async () => {
      const failed = env.environment.fetch(`http://127.0.0.1:${await closedPort()}/`);
      await expect(failed).rejects.toBeInstanceOf(RpcError);
      await expect(failed).rejects.toMatchObject({ rpcCode: -32603 });
    });

    it('follows an allowed redirect, and refuses one to a host the allow list does not name', async () => {
      const followed = await env.environment.fetch(`${base}/go`);
      expect({ status: followed.status, url: followed.url, redirected: followed.redirected, text: await followed.text() }).toEqual({
        status: 200,
        url: `${base}/hello`,
        redirected: true,
        text: 'hello',
      });
      const refused = env.environment.fetch(`${base}/away`);
      await expect(refused).rejects.toBeInstanceOf(HttpTargetRefusedError);
      await expect(refused).rejects.toMatchObject({ reason: 'not-allowed', target: 'localhost' });
    });
  });
});
