import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../src/errors';
import { loadOperatorTokens, OperatorTokens } from '../../../src/host/api/operator-tokens';

const GOOD = 'operator-token-0123456789';
const BAD = 'short-secret';

describe('operator tokens refuse bad input with a ConfigError', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-tokens-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    chmodSync(path, 0o600);
    return path;
  };

  it('accepts a good token and authenticates it', () => {
    expect(new OperatorTokens([GOOD]).authenticate(`Bearer ${GOOD}`)).toBe('token-1');
    expect(loadOperatorTokens(file('good', `# tokens\n${GOOD}\n`), {})?.source).toBe(join(dir, 'good'));
  });

  it('names the position, the file and the line, never the token, each time as CONFIG_INVALID', () => {
    const missing = join(dir, 'missing');
    const badLine = file('bad-line', `${GOOD}\n${BAD}\n`);
    const empty = file('empty', '# nothing here\n\n');
    const refusals: ReadonlyArray<readonly [() => unknown, string]> = [
      [() => new OperatorTokens([GOOD, BAD]), 'operator token 2 must be 16 to 512 printable characters without spaces'],
      [() => new OperatorTokens([]), 'no operator tokens'],
      [() => loadOperatorTokens(missing, {}), `cannot read operator tokens file ${missing} (ENOENT)`],
      [() => loadOperatorTokens(badLine, {}), `${badLine}: line 2 is not a token (16 to 512 printable characters, no spaces)`],
      [() => loadOperatorTokens(empty, {}), `operator tokens file ${empty} holds no token`],
      [() => loadOperatorTokens(undefined, { EXEC_RX_OPERATOR_TOKEN: BAD }), 'EXEC_RX_OPERATOR_TOKEN must be 16 to 512 printable characters without spaces'],
    ];
    for (const [refuse, message] of refusals) {
      let caught: unknown;
      try {
        refuse();
      } catch (error: unknown) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigError);
      expect(caught).toMatchObject({ code: 'CONFIG_INVALID', message });
      expect(String(caught)).not.toContain(BAD);
    }
  });
});
