import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/errors';
import { loadHostCredentials, parseCredentials } from '../../src/host/host-credentials';

describe('host credentials', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-creds-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('parses pairs separated by spaces, a colon or =, skipping comments and blank lines', () => {
    const keys = parseCredentials('# accepted\nAKID1 secret/one+x\n\nAKID2:secret2\n  AKID3=secret3  \n', 'f');
    expect([...keys]).toEqual([
      ['AKID1', 'secret/one+x'],
      ['AKID2', 'secret2'],
      ['AKID3', 'secret3'],
    ]);
  });

  it('names the bad line by number, never its content', () => {
    expect(() => parseCredentials('AKID1 ok\nAKID2 has a space-secret-value\n', 'creds.txt')).toThrow('creds.txt: line 2 is not');
    try {
      parseCredentials('AKID2 has a space-secret-value', 'creds.txt');
    } catch (error: unknown) {
      expect(String(error)).not.toContain('space-secret-value');
    }
  });

  it('loads a file given or named by EXEC_RX_CREDENTIALS_FILE, and warns when others can read it', () => {
    const file = join(dir, 'keys');
    writeFileSync(file, 'AKIDFILE filesecret\n');
    chmodSync(file, 0o600);
    expect(loadHostCredentials(file, {})).toEqual({ keys: new Map([['AKIDFILE', 'filesecret']]), source: file });
    chmodSync(file, 0o644);
    const loaded = loadHostCredentials(undefined, { EXEC_RX_CREDENTIALS_FILE: file });
    expect(loaded.warning).toContain('readable by others');
    expect(loaded.warning).not.toContain('filesecret');
  });

  it('takes one pair from the environment, and refuses none or half a pair', () => {
    expect(loadHostCredentials(undefined, { EXEC_RX_ACCESS_KEY_ID: 'AKIDENV', EXEC_RX_SECRET_ACCESS_KEY: 'envsecret' }).keys).toEqual(new Map([['AKIDENV', 'envsecret']]));
    expect(() => loadHostCredentials(undefined, {})).toThrow('no accepted access keys');
    expect(() => loadHostCredentials(undefined, { EXEC_RX_ACCESS_KEY_ID: 'AKIDENV' })).toThrow('set both');
    expect(() => loadHostCredentials(join(dir, 'missing'), {})).toThrow('cannot read credentials file');
  });

  it('raises every refusal as a ConfigError (CONFIG_INVALID), its message unchanged', () => {
    const refusals: Array<() => unknown> = [
      () => parseCredentials('AKID2 has a space-secret-value', 'creds.txt'),
      () => loadHostCredentials(undefined, {}),
      () => loadHostCredentials(undefined, { EXEC_RX_SECRET_ACCESS_KEY: 'envsecret' }),
      () => loadHostCredentials(join(dir, 'missing'), {}),
    ];
    for (const refuse of refusals) {
      expect(refuse).toThrow(ConfigError);
      expect(refuse).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    }
    expect(() => loadHostCredentials(join(dir, 'missing'), {})).toThrow(`cannot read credentials file ${join(dir, 'missing')} (ENOENT)`);
    expect(() => loadHostCredentials(undefined, { EXEC_RX_SECRET_ACCESS_KEY: 'envsecret' })).toThrow(
      'set both EXEC_RX_ACCESS_KEY_ID and EXEC_RX_SECRET_ACCESS_KEY, or neither',
    );
  });
});
