import { parseHostArgs, parseRunArgs, UsageError } from '../../src/cli/args';

describe('exec-rx run arguments', () => {
  it('takes the command after --, with its own dashes', () => {
    expect(parseRunArgs(['--cwd', '/tmp', '--env', 'A=1', '--env', 'B=x=y', '--tty', '-v', '--', 'sh', '-c', 'echo --x'], {})).toEqual({
      argv: ['sh', '-c', 'echo --x'],
      target: { kind: 'embedded' },
      cwd: '/tmp',
      env: { A: '1', B: 'x=y' },
      tty: true,
      verbose: true,
    });
  });

  it('picks the executor: --connect with --token or EXEC_RX_TOKEN, --stdio, or the embedded default', () => {
    expect(parseRunArgs(['--connect', 'ws://127.0.0.1:1', '--token', 't', '--', 'true'], {}).target).toEqual({ kind: 'connect', url: 'ws://127.0.0.1:1', token: 't' });
    expect(parseRunArgs(['--connect', 'ws://127.0.0.1:1', '--', 'true'], { EXEC_RX_TOKEN: 'e' }).target).toEqual({ kind: 'connect', url: 'ws://127.0.0.1:1', token: 'e' });
    expect(parseRunArgs(['--stdio', '--', 'true'], {}).target).toEqual({ kind: 'stdio' });
    expect(parseRunArgs(['true'], {}).target).toEqual({ kind: 'embedded' });
  });

  it.each([
    [[]],
    [['--connect', 'http://x', '--', 'true']],
    [['--connect', 'ws://x', '--stdio', '--', 'true']],
    [['--token', 't', '--', 'true']],
    [['--env', 'NOEQUALS', '--', 'true']],
    [['--bogus', '--', 'true']],
  ])('refuses %j with a UsageError', (args) => {
    expect(() => parseRunArgs(args, {})).toThrow(UsageError);
  });
});

describe('exec-rx host arguments', () => {
  it('has loopback defaults and parses limits', () => {
    expect(parseHostArgs([])).toMatchObject({ host: '127.0.0.1', port: 0, tlsCert: undefined });
    expect(parseHostArgs(['--port', '8443', '--host', '127.0.0.2', '--tls-cert', 'c', '--tls-key', 'k', '--max-environments', '3'])).toMatchObject({ port: 8443, host: '127.0.0.2', tlsCert: 'c', tlsKey: 'k', maxEnvironments: 3 });
  });

  it('has no flag for secrets, and refuses half a TLS pair or a bad number', () => {
    expect(() => parseHostArgs(['--secret', 'x'])).toThrow(UsageError);
    expect(() => parseHostArgs(['--tls-cert', 'c'])).toThrow('--tls-cert and --tls-key go together');
    expect(() => parseHostArgs(['--port', '70000'])).toThrow(UsageError);
  });
});
