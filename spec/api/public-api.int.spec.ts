import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import * as api from '../../src';
import * as client from '../../src/client';
import * as host from '../../src/host';

const root = join(__dirname, '..', '..');
const CHILD_TIMEOUT_MS = 30_000;

describe('public API', () => {

  it('exports exactly the curated names', () => {
    expect(Object.keys(api).sort()).toMatchSnapshot();
  });

  it('exports exactly the curated names from exec-rx/host', () => {
    expect(Object.keys(host).sort()).toMatchSnapshot();
  });

  it('exports exactly the curated names from exec-rx/client', () => {
    expect(Object.keys(client).sort()).toMatchSnapshot();
  });

  it('loads from the built CommonJS package with plain node', () => {
    const script = [
      "const api = require('exec-rx');",
      "const { EnvironmentManager, TransportClosedError } = api;",
      "if (typeof EnvironmentManager.fromAcceptedWebsocket !== 'function') throw new Error('missing fromAcceptedWebsocket');",
      "const e = new TransportClosedError('remote', 1006, 'x');",
      "process.stdout.write(JSON.stringify({ code: e.code, name: e.name, keys: Object.keys(api).length }));",
    ].join('\n');
    const out = execFileSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ code: 'TRANSPORT_CLOSED', name: 'TransportClosedError', keys: Object.keys(api).length });
  });

  it('imports from ESM through Node\'s CommonJS interop, with named exports', () => {
    const script = "import { EnvironmentManager, RpcConnection } from 'exec-rx'; process.stdout.write(typeof EnvironmentManager.connect + ' ' + typeof RpcConnection);";
    expect(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' })).toBe('function function');
  });

  it('loads exec-rx/host from the built package, from CommonJS and ESM, with the same names as the source', () => {
    const cjs = "process.stdout.write(JSON.stringify(Object.keys(require('exec-rx/host')).sort()));";
    const esm = "const m = await import('exec-rx/host'); process.stdout.write(JSON.stringify(Object.keys(m).filter((k) => k !== 'default' && k !== '__esModule').sort()));";
    const run = (args: readonly string[]): unknown => JSON.parse(execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: CHILD_TIMEOUT_MS }));
    expect(run(['-e', cjs])).toEqual(Object.keys(host).sort());
    expect(run(['--input-type=module', '-e', esm])).toEqual(Object.keys(host).sort());
  });
});
