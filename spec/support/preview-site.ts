/**
 * A small site served in an environment for the browser preview specs (issue 42): python's
 * `http.server.SimpleHTTPRequestHandler` (what `python3 -m http.server` runs) serving a temporary
 * directory that holds `index.html` (a heading, a relative `app.js`), `app.js` (marks the page, opens an
 * EventSource on the relative `events` and records each message's `Date.now()` in `window.__events`),
 * and, in the same server, `/events`: {@link SSE_COUNT} `text/event-stream` messages {@link SSE_GAP_MS}
 * apart, then an `end` event. Started through the executor; `ready` on its stdout is awaited, never a sleep.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { filter, take } from 'rxjs/operators';
import type { Environment, ExecProcess } from '../../src';
import { linesOf } from '../../src/exec/output-views';
import { closedPort } from './http-target';

/** Messages the SSE endpoint sends. */
export const SSE_COUNT = 5;
/** Milliseconds between them. */
export const SSE_GAP_MS = 400;

/** The heading `index.html` shows. */
export const SITE_HEADING = 'Served from the environment';

const INDEX_HTML = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>preview site</title></head>
<body>
<h1>${SITE_HEADING}</h1>
<p id="script">the script did not run</p>
<ul id="events"></ul>
<script src="app.js"></script>
</body>
</html>
`;

const APP_JS = `
document.getElementById('script').textContent = 'the relative script ran';
window.__events = [];
window.__eventsEnded = false;
const source = new EventSource('events');
source.onmessage = (event) => {
  window.__events.push({ data: event.data, at: Date.now() });
  const item = document.createElement('li');
  item.textContent = event.data;
  document.getElementById('events').append(item);
};
source.addEventListener('end', () => {
  window.__eventsEnded = true;
  source.close();
});
`;

/** The server (argv: port, directory). */
const SITE_SCRIPT = `
import functools, http.server, sys, time
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args): pass
    def do_GET(self):
        if self.path.split('?')[0] != '/events': return super().do_GET()
        self.send_response(200)
        self.send_header('content-type', 'text/event-stream')
        self.send_header('cache-control', 'no-cache')
        self.end_headers()
        for i in range(${SSE_COUNT}):
            self.wfile.write(b'data: tick %d\\n\\n' % i)
            self.wfile.flush()
            time.sleep(${SSE_GAP_MS / 1000})
        self.wfile.write(b'event: end\\ndata: end\\n\\n')
        self.wfile.flush()
        self.close_connection = True
server = http.server.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])), functools.partial(H, directory=sys.argv[2]))
server.daemon_threads = True
print('ready', flush=True)
server.serve_forever()
`;

/** A running site. */
export interface PreviewSite {
  readonly port: number;
  readonly process: ExecProcess;
  /** Terminates the server, awaits its exit and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Writes `files` into a new temporary directory, starts `argvOf(port, dir)` there through the executor and
 * resolves once a stdout line passes `ready`; `stop` terminates it, awaits its exit and removes the directory.
 */
async function startSite(
  environment: Environment,
  files: Readonly<Record<string, string>>,
  argvOf: (port: number, dir: string) => string[],
  ready: (line: string) => boolean,
): Promise<PreviewSite> {
  const dir = mkdtempSync(join(tmpdir(), 'exec-rx-preview-site-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const port = await closedPort();
  const { process } = await environment.getExecBackend().start({ argv: argvOf(port, dir), cwd: dir });
  await firstValueFrom(process.events$.pipe(linesOf('stdout'), filter(ready), take(1)));
  return {
    port,
    process,
    stop: async () => {
      await process.terminate();
      await process.wait();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes the site's files and starts its server in `environment` (the executor runs on this machine). */
export function startPreviewSite(environment: Environment): Promise<PreviewSite> {
  const files = { 'index.html': INDEX_HTML, 'app.js': APP_JS };
  return startSite(environment, files, (port, dir) => ['python3', '-u', '-c', SITE_SCRIPT, String(port), dir], (line) => line === 'ready');
}

/** The heading of the page {@link startPlainHttpServer} serves. */
export const PLAIN_HEADING = 'Served by python3 -m http.server';

/**
 * The literal `python3 -m http.server PORT --bind 127.0.0.1 --directory DIR`, started through the executor
 * over a directory holding an `index.html` with {@link PLAIN_HEADING}; resolves once it printed its
 * `Serving HTTP on …` line (stdout unbuffered: `-u`).
 */
export function startPlainHttpServer(environment: Environment): Promise<PreviewSite> {
  const files = { 'index.html': `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>plain</title></head><body><h1>${PLAIN_HEADING}</h1></body></html>` };
  const argvOf = (port: number, dir: string): string[] => ['python3', '-u', '-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', dir];
  return startSite(environment, files, argvOf, (line) => line.startsWith('Serving HTTP on'));
}
