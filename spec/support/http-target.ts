/**
 * A python3 HTTP server started through the executor, on 127.0.0.1 of the environment: what the preview
 * and fetch specs reach. It prints `ready` once bound; {@link startHttpTarget} awaits that line (never a
 * sleep) and its `stop` terminates it and awaits its exit.
 *
 * Routes: `/hello` (`hello`), `/headers` (the request's headers as JSON), `/go` (302 to `/hello`), `/abs`
 * (302 to `http://127.0.0.1:PORT/hello`), `/cookie` (a cookie with a Domain and a Path, and one without),
 * `/sse` (five `text/event-stream` events 300 ms apart), `/big?n=BYTES` (n bytes, content-length; then
 * `sent N` on stdout),
 * `/reset` (1000 bytes of a promised million, then a reset), `/hang` (never answers; prints `hanging` on
 * stdout), `/evil` (302 to the cloud metadata address), `/page` (HTML),
 * POST `/echo` (the body back, with its length in `x-length`).
 */
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { firstValueFrom } from 'rxjs';
import { filter, take } from 'rxjs/operators';
import type { Environment, ExecProcess } from '../../src';
import { linesOf } from '../../src/exec/output-views';

/** The server's script (argv: the port). */
export const HTTP_TARGET_SCRIPT = `
import http.server, json, socket, struct, sys, threading, time
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def log_message(self, *args): pass
    def answer(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers: self.send_header(name, value)
        self.send_header('content-length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        path, _, query = self.path.partition('?')
        if path == '/hello': return self.answer(200, b'hello', [('content-type', 'text/plain')])
        if path == '/headers': return self.answer(200, json.dumps([[k.lower(), v] for k, v in self.headers.items()]).encode(), [('content-type', 'application/json')])
        if path == '/go': return self.answer(302, b'', [('location', '/hello')])
        if path == '/evil': return self.answer(302, b'', [('location', 'http://169.254.169.254/latest/meta-data/')])
        if path == '/abs': return self.answer(302, b'', [('location', 'http://127.0.0.1:%d/hello?x=1' % PORT)])
        if path == '/cookie': return self.answer(200, b'ok', [('set-cookie', 'a=1; Domain=example.com; Path=/x; HttpOnly'), ('set-cookie', 'b=2')])
        if path == '/page': return self.answer(200, b'<!doctype html><title>target page</title><h1>hello from the environment</h1>', [('content-type', 'text/html')])
        if path == '/sse':
            self.send_response(200)
            self.send_header('content-type', 'text/event-stream')
            self.send_header('cache-control', 'no-cache')
            self.send_header('connection', 'close')
            self.end_headers()
            for i in range(5):
                self.wfile.write(b'data: tick %d\\n\\n' % i)
                self.wfile.flush()
                time.sleep(0.3)
            self.close_connection = True
            return
        if path == '/big':
            n = int(query.split('=')[1]) if query.startswith('n=') else 1024
            self.send_response(200)
            self.send_header('content-length', str(n))
            self.end_headers()
            block = bytes(range(256)) * 256
            left = n
            while left > 0:
                piece = block[:min(left, len(block))]
                self.wfile.write(piece)
                left -= len(piece)
            self.wfile.flush()
            print('sent %d' % n, flush=True)
            return
        if path == '/reset':
            self.send_response(200)
            self.send_header('content-length', '1000000')
            self.end_headers()
            self.wfile.write(b'x' * 1000)
            self.wfile.flush()
            time.sleep(0.2)
            # Closed with no linger once the handler returns: a reset, not an end.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
            self.close_connection = True
            return
        if path == '/hang':
            print('hanging', flush=True)
            threading.Event().wait()
        self.answer(404, b'no such path')
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('content-length', '0')))
        self.answer(200, body, [('x-length', str(len(body))), ('x-method', self.command)])
PORT = int(sys.argv[1])
server = http.server.ThreadingHTTPServer(('127.0.0.1', PORT), H)
server.daemon_threads = True
print('ready', flush=True)
server.serve_forever()
`;

/** A loopback port nothing listens on now (bound, then closed). */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A running target. */
export interface HttpTarget {
  readonly port: number;
  readonly process: ExecProcess;
  /** Terminates it and awaits its exit. */
  stop(): Promise<void>;
}

/** Starts the target in `environment` on `port` (default: a free one) and resolves once it printed `ready`. */
export async function startHttpTarget(environment: Environment, port?: number): Promise<HttpTarget> {
  const chosen = port ?? (await closedPort());
  const { process } = await environment.getExecBackend().start({ argv: ['python3', '-u', '-c', HTTP_TARGET_SCRIPT, String(chosen)], cwd: tmpdir() });
  await firstValueFrom(process.events$.pipe(linesOf('stdout'), filter((line) => line === 'ready'), take(1)));
  return {
    port: chosen,
    process,
    stop: async () => {
      await process.terminate();
      await process.wait();
    },
  };
}
