/**
 * How the host serves the dashboard (no browser here: spec/browser drives it): `/` is the built
 * index.html, never cached, under the dashboard's CSP; `/ui/{asset}` serves exactly the built files by
 * their hashed names, cached for a year, with their content types (source maps included); any other
 * name is 404 and no request path reaches a file outside the set; an unbuilt dashboard answers `/` with
 * 503 and a page saying to run `npm run build`. A real host on loopback, with the files of a fixture.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OperatorTokens } from '../../../src/host/api/operator-tokens';
import { DASHBOARD_CSP, IMMUTABLE } from '../../../src/host/api/routes-public';
import { defaultUiDir, packageRootAbove } from '../../../src/host/api/ui-bundle';
import type { HostServer } from '../../../src/host/host-options';
import { startHostServer } from '../../../src/host/host-server';
import { trackForCleanup } from '../../support/executor';
import { ApiClient } from './api-client';

const TOKEN = 'dashboard-spec-operator-token';
const FIXTURE = join(__dirname, 'ui-fixture');

async function hostWith(uiDir: string): Promise<{ host: HostServer; web: ApiClient }> {
  const host = trackForCleanup(await startHostServer({ credentials: new Map([['AKIDDASH', 'dashboard-spec-secret']]), log: () => undefined, operator: { tokens: new OperatorTokens([TOKEN]), uiDir, unauthenticatedPerSecond: 10_000 } }));
  return { host, web: new ApiClient(host.url, null) };
}

describe('host: serving the dashboard', () => {
  let web: ApiClient;

  beforeAll(async () => {
    ({ web } = await hostWith(FIXTURE));
  });

  it('serves / as the built index.html, no-cache, under the dashboard CSP (HEAD alike)', async () => {
    const seen: Record<string, unknown> = {};
    for (const method of ['GET', 'HEAD']) {
      const answer = await web.request(method, '/');
      seen[method] = { status: answer.status, type: answer.headers['content-type'], cache: answer.headers['cache-control'], csp: answer.headers['content-security-policy'], html: answer.text.startsWith('<!doctype html>') };
    }
    const expected = { status: 200, type: 'text/html; charset=utf-8', cache: 'no-cache', csp: DASHBOARD_CSP };
    expect(seen).toEqual({ GET: { ...expected, html: true }, HEAD: { ...expected, html: false } });
    expect(DASHBOARD_CSP).toBe("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; font-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
  });

  it('serves each hashed file with its content type, cached for a year as immutable', async () => {
    const served: Record<string, unknown> = {};
    for (const name of ['app-FIXTURE1.js', 'app-FIXTURE1.css', 'app-FIXTURE1.js.map', 'app-FIXTURE1.js.LEGAL.txt']) {
      const answer = await web.get(`/ui/${name}`);
      served[name] = { status: answer.status, type: answer.headers['content-type'], cache: answer.headers['cache-control'], nosniff: answer.headers['x-content-type-options'], length: Number(answer.headers['content-length']) };
    }
    const ok = (type: string, name: string) => ({ status: 200, type, cache: IMMUTABLE, nosniff: 'nosniff', length: statSync(join(FIXTURE, name)).size });
    expect(served).toEqual({
      'app-FIXTURE1.js': ok('text/javascript; charset=utf-8', 'app-FIXTURE1.js'),
      'app-FIXTURE1.css': ok('text/css; charset=utf-8', 'app-FIXTURE1.css'),
      'app-FIXTURE1.js.map': ok('application/json; charset=utf-8', 'app-FIXTURE1.js.map'),
      'app-FIXTURE1.js.LEGAL.txt': ok('text/plain; charset=utf-8', 'app-FIXTURE1.js.LEGAL.txt'),
    });
  });

  it('answers 404, never cached, for a name the build did not write, and reaches no file outside the set', async () => {
    const statuses: Record<string, number> = {};
    const paths = [
      '/ui/app-NOSUCH00.js',
      '/ui/notes.txt', // in the folder, not in the set
      '/ui/index.html', // served at / only
      '/ui/app-fixture1.js', // hashes are upper case
      '/ui/',
      '/ui/../package.json',
      '/ui/..%2fpackage.json',
      '/ui/%2e%2e%2f%2e%2e%2fpackage.json',
      '/ui/app-FIXTURE1.js/x',
      '/ui/.%2e/ui-fixture/notes.txt',
    ];
    for (const path of paths) {
      const answer = await web.get(path);
      statuses[path] = answer.status;
      expect({ path, leaked: answer.text.includes('not part of the build') || answer.text.includes('"name"') }).toEqual({ path, leaked: false });
    }
    const missing = await web.get('/ui/app-NOSUCH00.js');
    expect(missing.headers['cache-control']).toBe('no-store');
    // 404 for a name not in the set, and for a path no row has (the executors' side answers it); 400 where
    // the one segment is not a safe name (an empty one, an encoded slash).
    expect(statuses).toEqual({
      '/ui/app-NOSUCH00.js': 404,
      '/ui/notes.txt': 404,
      '/ui/index.html': 404,
      '/ui/app-fixture1.js': 404,
      '/ui/': 400,
      '/ui/../package.json': 404,
      '/ui/..%2fpackage.json': 400,
      '/ui/%2e%2e%2f%2e%2e%2fpackage.json': 400,
      '/ui/app-FIXTURE1.js/x': 404,
      '/ui/.%2e/ui-fixture/notes.txt': 404,
    });
  });

  it('answers / with 503 and a page saying to run `npm run build` while the dashboard is not built', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'exec-rx-no-ui-'));
    try {
      const { web: unbuilt } = await hostWith(empty);
      const answer = await unbuilt.get('/');
      expect({ status: answer.status, type: answer.headers['content-type'], says: answer.text.includes('npm run build') }).toEqual({ status: 503, type: 'text/plain; charset=utf-8', says: true });
      expect((await unbuilt.get('/ui/app-FIXTURE1.js')).status).toBe(404);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('serves what scripts/build-ui.mjs builds: hashed script and style, their maps, an index.html with no inline code', async () => {
    const out = mkdtempSync(join(tmpdir(), 'exec-rx-ui-build-'));
    try {
      const root = join(__dirname, '..', '..', '..');
      execFileSync(process.execPath, [join(root, 'scripts', 'build-ui.mjs'), '--outdir', out], { cwd: root, stdio: 'pipe', timeout: 120_000 });
      const index = readFileSync(join(out, 'index.html'), 'utf8');
      const referenced = [...index.matchAll(/(?:href|src)="\/ui\/([^"]+)"/g)].map((match) => match[1] ?? '');
      expect(referenced).toEqual([expect.stringMatching(/^app-[A-Z0-9]{8}\.css$/), expect.stringMatching(/^app-[A-Z0-9]{8}\.js$/)]);
      expect({ inlineScript: /<script(?![^>]*\ssrc=)[^>]*>/.test(index), inlineStyle: /<style|\sstyle=/.test(index) }).toEqual({ inlineScript: false, inlineStyle: false });
      expect(readdirSync(out).filter((name) => name.endsWith('.map')).sort()).toEqual(referenced.map((name) => `${name}.map`).sort());
      const { web: built } = await hostWith(out);
      const page = await built.get('/');
      expect({ status: page.status, csp: page.headers['content-security-policy'], body: page.text }).toEqual({ status: 200, csp: DASHBOARD_CSP, body: index });
      for (const name of [...referenced, ...referenced.map((n) => `${n}.map`)]) {
        const answer = await built.get(`/ui/${name}`);
        expect({ name, status: answer.status, cache: answer.headers['cache-control'], length: Number(answer.headers['content-length']) }).toEqual({ name, status: 200, cache: IMMUTABLE, length: statSync(join(out, name)).size });
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('finds dist/ui by walking up to the package root', () => {
    const root = packageRootAbove(__dirname);
    expect(root).toBe(join(__dirname, '..', '..', '..'));
    expect(defaultUiDir()).toBe(join(join(__dirname, '..', '..', '..'), 'dist', 'ui'));
  });
});
