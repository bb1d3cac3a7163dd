/**
 * How the host serves its API reference (issue 40; no browser here: spec/browser/api-docs.spec.ts drives
 * it): `/api/v1/docs` is the built index.html, public, never cached, under its own strict CSP;
 * `/api/v1/docs/{asset}` serves exactly the built files (Swagger UI's script and style, our script, the
 * license note) by their hashed names, cached for a year, with their content types; any other name is 404;
 * an unbuilt reference answers 503. A real host on loopback with operator tokens, asked without one.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OperatorTokens } from '../../../src/host/api/operator-tokens';
import { API_DOCS_CSP, IMMUTABLE } from '../../../src/host/api/routes-public';
import type { HostServer } from '../../../src/host/host-options';
import { startHostServer } from '../../../src/host/host-server';
import { API_PREFIX } from '../../../src/wire/operator-api';
import { trackForCleanup } from '../../support/executor';
import { ApiClient } from './api-client';

const TOKEN = 'api-docs-spec-operator-token';
const FIXTURE = join(__dirname, 'ui-fixture');
const DOCS = `${API_PREFIX}/docs`;

/** A host whose pages are in `uiDir`, and a client with no token. */
async function hostWith(uiDir: string): Promise<{ host: HostServer; web: ApiClient }> {
  const host = trackForCleanup(
    await startHostServer({
      credentials: new Map([['AKIDDOCS', 'api-docs-spec-secret']]),
      log: () => undefined,
      operator: { tokens: new OperatorTokens([TOKEN]), uiDir, unauthenticatedPerSecond: 10_000 },
    }),
  );
  return { host, web: new ApiClient(host.url, null) };
}

describe('host: serving the API reference', () => {
  let web: ApiClient;

  beforeAll(async () => {
    ({ web } = await hostWith(FIXTURE));
  });

  it('serves /api/v1/docs without a token as the built index.html, no-cache, under its strict CSP (HEAD alike)', async () => {
    const seen: Record<string, unknown> = {};
    for (const method of ['GET', 'HEAD']) {
      const answer = await web.request(method, DOCS);
      seen[method] = { status: answer.status, type: answer.headers['content-type'], cache: answer.headers['cache-control'], csp: answer.headers['content-security-policy'], body: answer.text };
    }
    const expected = { status: 200, type: 'text/html; charset=utf-8', cache: 'no-cache', csp: API_DOCS_CSP };
    expect(seen).toEqual({ GET: { ...expected, body: readFileSync(join(FIXTURE, 'api-docs', 'index.html'), 'utf8') }, HEAD: { ...expected, body: '' } });
    // A token, wrong or right, changes nothing: the row is public.
    for (const token of ['not-a-token-of-this-host', TOKEN]) expect((await web.get(DOCS, { token })).status).toBe(200);
    // Nothing inline, no eval, nothing from another origin, no frames, no forms.
    expect(API_DOCS_CSP).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
  });

  it('serves each file of the set with its content type, cached for a year as immutable, without a token (HEAD alike)', async () => {
    const served: Record<string, unknown> = {};
    const names = ['swagger-ui-bundle-FIXTURE2.js', 'swagger-ui-FIXTURE2.css', 'api-docs-FIXTURE2.js', 'swagger-ui-bundle-FIXTURE2.js.LICENSE.txt'];
    for (const name of names) {
      for (const method of ['GET', 'HEAD']) {
        const answer = await web.request(method, `${DOCS}/${name}`);
        const { status, headers, text } = answer;
        served[`${method} ${name}`] = { status, type: headers['content-type'], cache: headers['cache-control'], nosniff: headers['x-content-type-options'], length: Number(headers['content-length']), text };
      }
    }
    const ok = (method: string, type: string, name: string) => {
      const bytes = readFileSync(join(FIXTURE, 'api-docs', name));
      return { status: 200, type, cache: IMMUTABLE, nosniff: 'nosniff', length: bytes.length, text: method === 'GET' ? bytes.toString('utf8') : '' };
    };
    const types = ['text/javascript; charset=utf-8', 'text/css; charset=utf-8', 'text/javascript; charset=utf-8', 'text/plain; charset=utf-8'];
    expect(served).toEqual(Object.fromEntries(names.flatMap((name, i) => ['GET', 'HEAD'].map((method) => [`${method} ${name}`, ok(method, types[i] ?? '', name)]))));
  });

  it('answers 404, never cached, for a name not in the set, and reaches no other file', async () => {
    const paths = [
      `${DOCS}/swagger-ui-bundle-NOSUCH00.js`,
      `${DOCS}/swagger-ui-bundle.js`, // swagger-ui-dist's own name: only hashed copies are served
      `${DOCS}/notes.txt`, // in the folder, not in the set
      `${DOCS}/LICENSE`, // shipped, not served
      `${DOCS}/index.html`, // served at /api/v1/docs only
      `${DOCS}/app-FIXTURE1.js`, // the dashboard's, not the reference's
      `${DOCS}/swagger-ui-fixture2.css`, // hashes are upper case
      `${DOCS}/..%2F..%2Fpackage.json`,
      `${DOCS}/api-docs-FIXTURE2.js/x`,
    ];
    const statuses: Record<string, unknown> = {};
    for (const path of paths) {
      const answer = await web.get(path);
      statuses[path] = { status: answer.status, cache: answer.status === 404 ? answer.headers['cache-control'] : 'n/a', leaked: /fixture: a file|fixture: the license|"name"/.test(answer.text) };
    }
    const missing = { status: 404, cache: 'no-store', leaked: false };
    expect(statuses).toEqual({
      ...Object.fromEntries(paths.slice(0, 7).map((path) => [path, missing])),
      // not a safe name (an encoded slash): 400; a path under /api that no public row has: a token first (401)
      [`${DOCS}/..%2F..%2Fpackage.json`]: { status: 400, cache: 'n/a', leaked: false },
      [`${DOCS}/api-docs-FIXTURE2.js/x`]: { status: 401, cache: 'n/a', leaked: false },
    });
  });

  it('answers /api/v1/docs with 503 and a page saying to run `npm run build` while it is not built', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'exec-rx-no-api-docs-'));
    try {
      const { web: unbuilt } = await hostWith(empty);
      const answer = await unbuilt.get(DOCS);
      expect({ status: answer.status, type: answer.headers['content-type'], says: answer.text.includes('npm run build') }).toEqual({ status: 503, type: 'text/plain; charset=utf-8', says: true });
      expect((await unbuilt.get(`${DOCS}/swagger-ui-bundle-FIXTURE2.js`)).status).toBe(404);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('serves what scripts/build-ui.mjs builds: swagger-ui-dist copied with hashed names, our read-only script, an index.html with no inline code', async () => {
    const out = mkdtempSync(join(tmpdir(), 'exec-rx-api-docs-build-'));
    try {
      const root = join(__dirname, '..', '..', '..');
      execFileSync(process.execPath, [join(root, 'scripts', 'build-ui.mjs'), '--outdir', out], { cwd: root, stdio: 'pipe', timeout: 120_000 });
      const dir = join(out, 'api-docs');
      const index = readFileSync(join(dir, 'index.html'), 'utf8');
      const referenced = [...index.matchAll(/(?:href|src)="docs\/([^"]+)"/g)].map((match) => match[1] ?? '');
      expect(referenced).toEqual([
        expect.stringMatching(/^swagger-ui-[A-Z0-9]{8}\.css$/),
        expect.stringMatching(/^swagger-ui-bundle-[A-Z0-9]{8}\.js$/),
        expect.stringMatching(/^api-docs-[A-Z0-9]{8}\.js$/),
      ]);
      // Only the files of the set, from this origin: no other src or href but the data: favicon and the document's link.
      expect([...index.matchAll(/(?:href|src)="([^"]+)"/g)].map((match) => match[1]).filter((ref) => !ref?.startsWith('docs/'))).toEqual(['data:,', 'openapi.json']);
      expect({ inlineScript: /<script(?![^>]*\ssrc=)[^>]*>/.test(index), inlineStyle: /<style|\sstyle=/.test(index) }).toEqual({ inlineScript: false, inlineStyle: false });
      const [style = '', bundle = '', script = ''] = referenced;
      expect(readdirSync(dir).sort()).toEqual(['LICENSE', 'NOTICE', 'index.html', bundle, `${bundle}.LICENSE.txt`, script, style].sort());
      const dist = join(root, 'node_modules', 'swagger-ui-dist');
      // The package's files, as they are but for the names of the source map (not shipped) and of the license note.
      expect(readFileSync(join(dir, 'LICENSE'), 'utf8')).toBe(readFileSync(join(dist, 'LICENSE'), 'utf8'));
      expect(readFileSync(join(dir, style), 'utf8').trim()).toBe(readFileSync(join(dist, 'swagger-ui.css'), 'utf8').replace(/\/\*# sourceMappingURL=[^*]*\*\/\s*$/, '').trim());
      const copied = readFileSync(join(dir, bundle), 'utf8');
      expect(copied.split('\n', 1)[0]).toBe(`/*! For license information please see ${bundle}.LICENSE.txt */`);
      expect(copied.length).toBeGreaterThan(1_000_000);
      // Read-only: no submit method, no validator badge, no Authorize button.
      const ours = readFileSync(join(dir, script), 'utf8');
      expect(ours).toEqual(expect.stringContaining('supportedSubmitMethods:[]'));
      expect(ours).toEqual(expect.stringContaining('validatorUrl:null'));
      expect(ours).toEqual(expect.stringContaining('authorizeBtn:'));

      const { web: built } = await hostWith(out);
      const page = await built.get(DOCS);
      expect({ status: page.status, csp: page.headers['content-security-policy'], body: page.text }).toEqual({ status: 200, csp: API_DOCS_CSP, body: index });
      const types: Record<string, string> = { css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8', txt: 'text/plain; charset=utf-8' };
      for (const name of [...referenced, `${bundle}.LICENSE.txt`]) {
        const answer = await built.request('HEAD', `${DOCS}/${name}`);
        const type = types[name.split('.').pop() ?? ''];
        expect({ name, status: answer.status, type: answer.headers['content-type'], cache: answer.headers['cache-control'], length: Number(answer.headers['content-length']) }).toEqual({
          name,
          status: 200,
          type,
          cache: IMMUTABLE,
          length: statSync(join(dir, name)).size,
        });
      }
      expect((await built.get(`${DOCS}/NOTICE`)).status).toBe(404);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
