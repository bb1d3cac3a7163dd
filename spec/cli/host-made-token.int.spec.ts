/**
 * Issue 21: the operator token a host makes at its first start (none configured) is kept as a digest in
 * its data dir, so the url it printed still works after a restart, and a restarted host makes none.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient } from '../host/api/api-client';
import { startCli } from './cli-process';
import { hostChildren, stderrOf } from './host-child';

jest.setTimeout(60_000);

const KEY_ID = 'AKIDCLIMADE';
const SECRET = 'cli-made-secret-do-not-print';

describe('exec-rx host with no operator token configured, restarted on its data dir', () => {
  const hosts = hostChildren('cli-made', { keyId: KEY_ID, secret: SECRET, token: 'unused-operator-token-0000' });
  const start = async (): Promise<{ run: ReturnType<typeof startCli>; base: string; page: string }> => {
    const env = { ...hosts.env() };
    delete env['EXEC_RX_OPERATOR_TOKEN'];
    const run = startCli(['host', '--port', '0', '--data-dir', hosts.dataDir()], env);
    await run.waitFor('stdout', '--environment-id <environment-id>\n');
    const printed = run.stdout.map((c) => c.text).join('');
    const base = /^exec-rx host listening on (\S+)$/m.exec(printed)?.[1] ?? '';
    // stdout is a pipe here, not a terminal: a url with a token goes to a 0600 file in the data dir.
    const file = /^Operator API and page: in (\S+) \(0600; it carries the token\)$/m.exec(printed)?.[1];
    if (file !== undefined) {
      expect(file).toBe(join(hosts.dataDir(), 'operator-url'));
      expect(statSync(file).mode & 0o777).toBe(0o600);
      return { run, base, page: readFileSync(file, 'utf8').trim() };
    }
    const page = /^Operator API and page: (\S+)$/m.exec(printed)?.[1] ?? '';
    return { run, base, page };
  };

  it('accepts the token of the first start again, and shows none the second time', async () => {
    const first = await start();
    const token = /#token=(\S+)$/.exec(first.page)?.[1];
    if (token === undefined) throw new Error(`no token in ${first.page}`);
    expect([...first.run.stdout, ...first.run.stderr].map((c) => c.text).join('')).not.toContain(token);
    expect((await new ApiClient(first.base, token).get('/api/v1/environments')).status).toBe(200);
    first.run.child.kill('SIGKILL');
    await first.run.done;
    // Only its digest is kept.
    const kept = readFileSync(join(hosts.dataDir(), 'host.json'), 'utf8');
    expect(kept).not.toContain(token);
    expect(kept).toMatch(/"madeTokenDigest":"[0-9a-f]{64}"/);

    const second = await start();
    try {
      expect(second.base).toBe(first.base);
      expect(second.page).toBe(`${second.base}/`);
      expect(stderrOf(second.run)).toContain('no operator token configured: the one made at the first start on this data dir still works (kept as a digest)');
      expect((await new ApiClient(second.base, token).get('/api/v1/environments')).status).toBe(200);
      expect((await new ApiClient(second.base, `${token}x`).get('/api/v1/environments')).status).toBe(401);
    } finally {
      second.run.child.kill('SIGTERM');
      await second.run.done;
    }
  });
});
