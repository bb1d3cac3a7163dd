import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import * as api from '../../src';

describe('public API', () => {

  it('exports exactly the curated names', () => {
    expect(Object.keys(api).sort()).toMatchSnapshot();
  });

  it('loads from the built CommonJS package with plain node', () => {
    const root = join(__dirname, '..', '..');
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
    const root = join(__dirname, '..', '..');
    const script = "import { EnvironmentManager, RpcConnection } from 'exec-rx'; process.stdout.write(typeof EnvironmentManager.connect + ' ' + typeof RpcConnection);";
    expect(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' })).toBe('function function');
  });
});
