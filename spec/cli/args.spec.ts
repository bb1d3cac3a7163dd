import { parseHostArgs, parseRunArgs, UsageError } from '../../src/cli/args';
import { ConfigError } from '../../src/errors';
import { hostAccess, parseLogsArgs, parseLsArgs } from '../../src/cli/host-args';

const TOKEN = 'args-spec-token-do-not-print';
/** A token file reader over a fixed set of files. */
const files =
  (contents: Record<string, string>) =>
  (path: string): string => {
    const text = contents[path];
    if (text === undefined) throw new Error(`ENOENT: ${path}`);
    return text;
  };
/** The message of what `parse` throws (it must throw a UsageError). */
function usageMessage(parse: () => unknown): string {
  try {
    parse();
  } catch (error: unknown) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error('no UsageError');
}

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

  it('picks the executor: --connect with --token, EXEC_RX_EXECUTOR_TOKEN or (the old name) EXEC_RX_TOKEN, --stdio, or the embedded default', () => {
    expect(parseRunArgs(['--connect', 'ws://127.0.0.1:1', '--token', 't', '--', 'true'], { EXEC_RX_EXECUTOR_TOKEN: 'x' }).target).toEqual({ kind: 'connect', url: 'ws://127.0.0.1:1', token: 't' });
    expect(parseRunArgs(['--connect', 'ws://127.0.0.1:1', '--', 'true'], { EXEC_RX_EXECUTOR_TOKEN: 'x', EXEC_RX_TOKEN: 'e' }).target).toEqual({ kind: 'connect', url: 'ws://127.0.0.1:1', token: 'x' });
    expect(parseRunArgs(['--connect', 'ws://127.0.0.1:1', '--', 'true'], { EXEC_RX_EXECUTOR_TOKEN: '', EXEC_RX_TOKEN: 'e' }).target).toEqual({ kind: 'connect', url: 'ws://127.0.0.1:1', token: 'e' });
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

  it.each([
    ['s3cr3t-value-given-without-a-name', 'an argument without "="'],
    ['=s3cr3t-value-given-without-a-name', 'an argument starting with "="'],
  ])('refuses a malformed --env without echoing it (it may be a secret value)', (pair, what) => {
    const refuse = (): unknown => parseRunArgs(['--env', pair, '--', 'true'], {});
    expect(refuse).toThrow(new UsageError(`--env expects NAME=VALUE, got ${what} (not shown: it may be a value)`));
    expect(refuse).not.toThrow(/s3cr3t/);
  });
});

describe('exec-rx host arguments', () => {
  it('has loopback defaults and parses limits', () => {
    expect(parseHostArgs([])).toMatchObject({ host: '127.0.0.1', port: 0, tlsCert: undefined });
    expect(parseHostArgs([]).metricsPort).toBeUndefined();
    expect(parseHostArgs(['--metrics-port', '0']).metricsPort).toBe(0);
    expect(parseHostArgs(['--metrics-port', '9464']).metricsPort).toBe(9464);
    expect(() => parseHostArgs(['--metrics-port', '70000'])).toThrow(UsageError);
    expect(parseHostArgs(['--port', '8443', '--host', '127.0.0.2', '--tls-cert', 'c', '--tls-key', 'k', '--max-environments', '3'])).toMatchObject({ port: 8443, host: '127.0.0.2', tlsCert: 'c', tlsKey: 'k', maxEnvironments: 3 });
  });

  it('parses the log flags: a format, a level (info by default) and an audit file', () => {
    expect(parseHostArgs([])).toMatchObject({ logFormat: undefined, logLevel: 'info', auditLog: undefined });
    expect(parseHostArgs(['--log-format', 'json', '--log-level', 'debug', '--audit-log', '/var/log/audit'])).toMatchObject({ logFormat: 'json', logLevel: 'debug', auditLog: '/var/log/audit' });
    expect(parseHostArgs(['--log-format', 'pretty']).logFormat).toBe('pretty');
    expect(() => parseHostArgs(['--log-format', 'xml'])).toThrow('--log-format expects json or pretty');
    expect(() => parseHostArgs(['--log-level', 'verbose'])).toThrow('--log-level expects one of trace, debug, info, warn, error, fatal');
  });

  it('has no flag for secrets, and refuses half a TLS pair or a bad number', () => {
    expect(() => parseHostArgs(['--secret', 'x'])).toThrow(UsageError);
    expect(() => parseHostArgs(['--tls-cert', 'c'])).toThrow('--tls-cert and --tls-key go together');
    expect(() => parseHostArgs(['--port', '70000'])).toThrow(UsageError);
  });

  it('parses --stop-local-executor, alone with a data dir', () => {
    expect(parseHostArgs([])).toMatchObject({ stopLocalExecutor: false, localExecutorId: undefined });
    expect(parseHostArgs(['--local-executor'])).toMatchObject({ stopLocalExecutor: false, localExecutorId: 'local' });
    expect(parseHostArgs(['--stop-local-executor', '--data-dir', '/d'])).toMatchObject({ stopLocalExecutor: true, storage: { 'data-dir': '/d' } });
    expect(() => parseHostArgs(['--stop-local-executor', '--local-executor'])).toThrow('--stop-local-executor excludes --local-executor');
    expect(() => parseHostArgs(['--stop-local-executor', '--data-dir', 'none'])).toThrow('--stop-local-executor needs a data dir');
  });

  it('parses --cors-origin, repeated or as a comma list, and refuses * or what is not a bare origin with a ConfigError', () => {
    expect(parseHostArgs([]).corsOrigins).toEqual([]);
    expect(parseHostArgs(['--cors-origin', 'http://127.0.0.1:5173,https://ui.example', '--cors-origin', 'http://localhost:3000']).corsOrigins).toEqual(['http://127.0.0.1:5173', 'https://ui.example', 'http://localhost:3000']);
    expect(() => parseHostArgs(['--cors-origin', '*'])).toThrow(ConfigError);
    expect(() => parseHostArgs(['--cors-origin', '*'])).toThrow('--cors-origin * is refused');
    expect(() => parseHostArgs(['--cors-origin', 'http://127.0.0.1:5173/app'])).toThrow('is not a bare origin');
    expect(() => parseHostArgs(['--cors-origin'])).toThrow(UsageError);
  });
});

describe('exec-rx run --host arguments', () => {
  it('runs in a host environment with --host and --environment, the token from EXEC_RX_TOKEN or --token-file', () => {
    expect(parseRunArgs(['--host', 'http://127.0.0.1:8080/', '--environment', 'local', '--cwd', '/tmp', '--env', 'A=1', '--', 'sh', '-c', 'echo'], { EXEC_RX_TOKEN: TOKEN })).toEqual({
      argv: ['sh', '-c', 'echo'],
      target: { kind: 'host', access: { url: 'http://127.0.0.1:8080', token: TOKEN }, environmentId: 'local' },
      cwd: '/tmp',
      env: { A: '1' },
      tty: false,
      verbose: false,
    });
    const read = files({ '/t': `  ${TOKEN}\n` });
    expect(parseRunArgs(['--host', 'https://h.example:8443', '--environment', 'e', '--token-file', '/t', '--tty', '--', 'true'], { EXEC_RX_TOKEN: 'ignored-xxxxxxxx' }, read).target).toEqual({
      kind: 'host',
      access: { url: 'https://h.example:8443', token: TOKEN },
      environmentId: 'e',
    });
  });

  it('takes several hosts (the replicas of one cluster) from repeated --host, comma lists, or EXEC_RX_HOST', () => {
    const a = 'http://127.0.0.1:8081';
    const b = 'http://127.0.0.1:8082';
    const c = 'https://h.example:8443';
    const target = (args: readonly string[], env: NodeJS.ProcessEnv = { EXEC_RX_TOKEN: TOKEN }): unknown => parseRunArgs([...args, '--environment', 'e', '--', 'true'], env).target;
    const access = { url: a, urls: [a, b, c], token: TOKEN };
    expect(target(['--host', a, '--host', `${b}/`, '--host', c])).toEqual({ kind: 'host', access, environmentId: 'e' });
    expect(target(['--host', `${a}, ${b},${c}`])).toEqual({ kind: 'host', access, environmentId: 'e' });
    expect(target(['--host', `${a},${b}`, '--host', c])).toEqual({ kind: 'host', access, environmentId: 'e' });
    expect(target([], { EXEC_RX_HOST: `${a},${b},${c}`, EXEC_RX_TOKEN: TOKEN })).toEqual({ kind: 'host', access, environmentId: 'e' });
    // A repeat is one url; one url left is the single-host access it always was.
    expect(target(['--host', a, '--host', a])).toEqual({ kind: 'host', access: { url: a, token: TOKEN }, environmentId: 'e' });
    expect(() => target(['--host', `${a},,${b}`])).toThrow('--host expects urls separated by commas, without empty items');
    expect(() => target(['--host', `${a},ftp://x`])).toThrow('--host expects an http:// or https:// url');
    expect(parseLsArgs(['--host', `${a},${b}`], { EXEC_RX_TOKEN: TOKEN }).access).toEqual({ url: a, urls: [a, b], token: TOKEN });
  });

  it('takes the host from EXEC_RX_HOST when --environment comes alone', () => {
    expect(parseRunArgs(['--environment', 'e', '--', 'true'], { EXEC_RX_HOST: 'http://127.0.0.1:9000', EXEC_RX_TOKEN: TOKEN }).target).toEqual({ kind: 'host', access: { url: 'http://127.0.0.1:9000', token: TOKEN }, environmentId: 'e' });
    // Without --environment, EXEC_RX_HOST does not take a local run away.
    expect(parseRunArgs(['--', 'true'], { EXEC_RX_HOST: 'http://127.0.0.1:9000', EXEC_RX_TOKEN: TOKEN }).target).toEqual({ kind: 'embedded' });
  });

  it.each([
    [['--host', 'http://127.0.0.1:1', '--connect', 'ws://x', '--environment', 'e', '--', 'true'], '--host excludes --connect and --stdio'],
    [['--host', 'http://127.0.0.1:1', '--stdio', '--environment', 'e', '--', 'true'], '--host excludes --connect and --stdio'],
    [['--host', 'http://127.0.0.1:1', '--', 'true'], '--host needs --environment ID (see exec-rx ls)'],
    [['--host', 'http://127.0.0.1:1', '--environment', 'e', '--token', 't', '--', 'true'], '--token goes with --connect (with --host: --token-file or EXEC_RX_TOKEN)'],
    [['--environment', 'e', '--connect', 'ws://x', '--', 'true'], '--environment goes with --host, not --connect or --stdio'],
    [['--token-file', '/t', '--', 'true'], '--token-file goes with --host'],
    [['--host', 'http://127.0.0.1:1', '--environment', '../x', '--', 'true'], '--environment must be letters, digits, ".", "_" or "-" (at most 128)'],
    [['--environment', 'e', '--', 'true'], 'no host: pass --host URL or set EXEC_RX_HOST'],
  ])('refuses %j: %s', (args, message) => {
    expect(usageMessage(() => parseRunArgs(args, { EXEC_RX_TOKEN: TOKEN }))).toBe(message);
  });

  it('says where the token goes when there is none', () => {
    expect(usageMessage(() => parseRunArgs(['--host', 'http://127.0.0.1:1', '--environment', 'e', '--', 'true'], {}))).toBe('no operator token: set EXEC_RX_TOKEN or pass --token-file FILE');
  });
});

describe('where the host and its token come from', () => {
  it('prefers --host to EXEC_RX_HOST and --token-file to EXEC_RX_TOKEN, trimming both tokens', () => {
    const read = files({ '/f': `${TOKEN}\r\n` });
    expect(hostAccess('http://127.0.0.1:1/', '/f', { EXEC_RX_HOST: 'http://127.0.0.1:2', EXEC_RX_TOKEN: 'other-token-xxxxxxxxx' }, read)).toEqual({ url: 'http://127.0.0.1:1', token: TOKEN });
    expect(hostAccess(undefined, undefined, { EXEC_RX_HOST: 'http://127.0.0.1:2', EXEC_RX_TOKEN: ` ${TOKEN} ` })).toEqual({ url: 'http://127.0.0.1:2', token: TOKEN });
    expect(hostAccess('http://127.0.0.1:1/base/', undefined, { EXEC_RX_TOKEN: TOKEN }).url).toBe('http://127.0.0.1:1/base');
  });

  it.each([
    [undefined, undefined, { EXEC_RX_TOKEN: TOKEN }, 'no host: pass --host URL or set EXEC_RX_HOST'],
    ['http://127.0.0.1:1', undefined, {}, 'no operator token: set EXEC_RX_TOKEN or pass --token-file FILE'],
    ['http://127.0.0.1:1', undefined, { EXEC_RX_TOKEN: '  ' }, 'no operator token: set EXEC_RX_TOKEN or pass --token-file FILE'],
    ['http://127.0.0.1:1', '/empty', {}, '--token-file /empty is empty'],
    ['http://127.0.0.1:1', '/two', {}, '--token-file /two must hold one token (no spaces or line breaks inside)'],
    ['http://127.0.0.1:1', '/missing', {}, 'cannot read --token-file /missing'],
    ['ws://127.0.0.1:1', undefined, { EXEC_RX_TOKEN: TOKEN }, '--host expects an http:// or https:// url'],
    ['not a url', undefined, { EXEC_RX_TOKEN: TOKEN }, "--host expects the host's url (http://HOST:PORT)"],
  ] as const)('refuses host %j, token file %j, env %j: %s', (host, file, env, message) => {
    expect(usageMessage(() => hostAccess(host, file, env, files({ '/empty': '\n  \n', '/two': 'a b\n' })))).toBe(message);
  });

  it('refuses a url carrying the token (the startup url) without repeating it', () => {
    const message = usageMessage(() => hostAccess(`http://127.0.0.1:1/#token=${TOKEN}`, undefined, { EXEC_RX_TOKEN: TOKEN }));
    expect(message).toMatch(/^--host expects the host's base url/);
    expect(message).not.toContain(TOKEN);
    expect(usageMessage(() => hostAccess(undefined, undefined, { EXEC_RX_HOST: `http://u:${TOKEN}@127.0.0.1:1`, EXEC_RX_TOKEN: TOKEN }))).not.toContain(TOKEN);
  });
});

describe('exec-rx ls and logs arguments', () => {
  const env = { EXEC_RX_HOST: 'http://127.0.0.1:7000', EXEC_RX_TOKEN: TOKEN };

  it('parses ls [--host URL] [--token-file F] [--json]', () => {
    expect(parseLsArgs([], env)).toEqual({ access: { url: 'http://127.0.0.1:7000', token: TOKEN }, json: false });
    expect(parseLsArgs(['--host', 'http://127.0.0.1:1', '--token-file', '/f', '--json'], {}, files({ '/f': TOKEN }))).toEqual({ access: { url: 'http://127.0.0.1:1', token: TOKEN }, json: true });
    expect(() => parseLsArgs(['extra'], env)).toThrow(UsageError);
    expect(() => parseLsArgs(['--follow'], env)).toThrow(UsageError);
    expect(usageMessage(() => parseLsArgs([], {}))).toBe('no host: pass --host URL or set EXEC_RX_HOST');
  });

  it('parses logs --environment ID PROCESS [--follow] [--after SEQ]', () => {
    expect(parseLogsArgs(['--environment', 'local', 'p-1'], env)).toEqual({ access: { url: 'http://127.0.0.1:7000', token: TOKEN }, environmentId: 'local', processId: 'p-1', follow: false, afterSeq: 0 });
    expect(parseLogsArgs(['p-1', '--environment', 'local', '--follow', '--after', '42', '--host', 'http://127.0.0.1:1'], env)).toMatchObject({ access: { url: 'http://127.0.0.1:1' }, processId: 'p-1', follow: true, afterSeq: 42 });
  });

  it.each([
    [['p'], 'logs needs --environment ID'],
    [['--environment', 'e'], 'logs takes one process id: exec-rx logs --environment ID PROCESS'],
    [['--environment', 'e', 'p', 'q'], 'logs takes one process id: exec-rx logs --environment ID PROCESS'],
    [['--environment', 'e', 'p', '--after', '-1'], "Option '--after' argument is ambiguous."],
    [['--environment', 'e', 'p', '--after=-1'], '--after expects a seq (an integer, 0 or more)'],
    [['--environment', 'e', 'p', '--after', '1.5'], '--after expects a seq (an integer, 0 or more)'],
    [['--environment', 'e', 'p', '--after', 'x'], '--after expects a seq (an integer, 0 or more)'],
    [['--environment', 'e', 'a/b'], 'the process id must be letters, digits, ".", "_" or "-" (at most 128)'],
  ])('refuses logs %j: %s', (args, message) => {
    expect(usageMessage(() => parseLogsArgs(args, env))).toBe(message);
  });
});
