import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../src/errors';
import { loadOperatorTokens, OperatorTokens, parseOperatorTokenLine } from '../../../src/host/api/operator-tokens';

const GOOD = 'operator-token-0123456789';
const OTHER = 'other-operator-token-0123456789';
const BAD = 'short-secret';
const sha = (token: string): string => `sha256:${createHash('sha256').update(token).digest('hex')}`;

describe('the operator tokens file', () => {
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

  it('reads NAME ROLE ENVIRONMENTS SECRET lines (a token or its sha256), skipping blanks and comments', () => {
    const path = file('good', `# name role environments secret\n\nci operate build,test ${GOOD}\r\n  dash\tview  *   ${sha(OTHER)}  \n`);
    const loaded = loadOperatorTokens(path, {});
    expect(loaded?.source).toBe(path);
    expect(loaded?.tokens.authenticate(`Bearer ${GOOD}`)).toEqual({ name: 'ci', role: 'operate', environments: new Set(['build', 'test']) });
    expect(loaded?.tokens.authenticate(`bearer ${OTHER}`)).toEqual({ name: 'dash', role: 'view', environments: undefined });
    expect(loaded?.tokens.authenticate(`Bearer ${sha(OTHER)}`)).toBeUndefined();
    expect(loaded?.tokens.callers.map((caller) => caller.name)).toEqual(['ci', 'dash']);
  });

  it('adds EXEC_RX_OPERATOR_TOKEN as an operate token named env; the host made one is made', () => {
    const loaded = loadOperatorTokens(file('with-env', `ci view * ${GOOD}\n`), { EXEC_RX_OPERATOR_TOKEN: OTHER });
    expect(loaded?.tokens.authenticate(`Bearer ${OTHER}`)).toEqual({ name: 'env', role: 'operate', environments: undefined });
    expect(loadOperatorTokens(undefined, { EXEC_RX_OPERATOR_TOKEN: OTHER })?.source).toBe('EXEC_RX_OPERATOR_TOKEN');
    expect(loadOperatorTokens(undefined, {})).toBeUndefined();
    const made = OperatorTokens.generate();
    expect(made.tokens.authenticate(`Bearer ${made.token}`)?.name).toBe('made');
    expect(OperatorTokens.fromDigests([OperatorTokens.digestOf(GOOD)]).authenticate(`Bearer ${GOOD}`)).toEqual({ name: 'made', role: 'operate', environments: undefined });
  });

  it('names the file and the line, never the secret, each time as CONFIG_INVALID', () => {
    const missing = join(dir, 'missing');
    const at = (name: string, text: string): [() => unknown, string] => {
      const path = file(name, text);
      return [() => loadOperatorTokens(path, {}), path];
    };
    const cases: ReadonlyArray<readonly [string, string, (path: string) => string]> = [
      ['legacy', `# old\n${BAD}x${GOOD}\n`, (p) => `${p}: line 2 holds a bare token (the old format, one token per line): write it as "NAME operate * TOKEN" (or "NAME operate * sha256:HEX")`],
      ['fields', `ci operate ${BAD}${GOOD}\n`, (p) => `${p}: line 1 must be NAME ROLE ENVIRONMENTS SECRET (4 fields separated by spaces), not 3 fields`],
      ['five', `ci operate * ${GOOD} ${BAD}\n`, (p) => `${p}: line 1 must be NAME ROLE ENVIRONMENTS SECRET (4 fields separated by spaces), not 5 fields`],
      ['name', `${BAD}/x operate * ${GOOD}\n`, (p) => `${p}: line 1: the name must be letters, digits, '.', '_' or '-' (at most 128)`],
      ['reserved', `env operate * ${GOOD}\n`, (p) => `${p}: line 1: the name env is the host's own (env: EXEC_RX_OPERATOR_TOKEN, made: the token it makes)`],
      ['role', `ci ${BAD} * ${GOOD}\n`, (p) => `${p}: line 1: the role must be view or operate`],
      ['environments', `ci view a,${BAD}/x ${GOOD}\n`, (p) => `${p}: line 1: environments must be * or a comma list of ids (letters, digits, '.', '_' or '-')`],
      ['empty-env', `ci view a,,b ${GOOD}\n`, (p) => `${p}: line 1: environments must be * or a comma list of ids (letters, digits, '.', '_' or '-')`],
      ['short', `ci view * ${BAD}\n`, (p) => `${p}: line 1: the token must be 16 to 512 printable characters without spaces`],
      ['digest', `ci view * sha256:${BAD}\n`, (p) => `${p}: line 1: a sha256: secret must be followed by 64 hex digits`],
      ['same-name', `ci view * ${GOOD}\nci operate * ${OTHER}\n`, (p) => `${p}: line 2: the name ci is already used (${p}: line 1)`],
      ['same-secret', `ci view * ${GOOD}\ncd operate * ${sha(GOOD)}\n`, (p) => `${p}: line 2: the same secret as ${p}: line 1`],
      ['empty', '# nothing here\n\n', (p) => `operator tokens file ${p} holds no token`],
    ];
    const refusals: [() => unknown, string][] = cases.map(([name, text, message]) => {
      const [refuse, path] = at(name, text);
      return [refuse, message(path)];
    });
    const envSame = file('env-same', `ci view * ${GOOD}\n`);
    refusals.push(
      [() => loadOperatorTokens(envSame, { EXEC_RX_OPERATOR_TOKEN: GOOD }), `EXEC_RX_OPERATOR_TOKEN: the same secret as ${envSame}: line 1`],
      [() => loadOperatorTokens(missing, {}), `cannot read operator tokens file ${missing} (ENOENT)`],
      [() => loadOperatorTokens(undefined, { EXEC_RX_OPERATOR_TOKEN: BAD }), 'EXEC_RX_OPERATOR_TOKEN must be 16 to 512 printable characters without spaces'],
      [() => new OperatorTokens([GOOD, BAD]), 'operator token 2: the token must be 16 to 512 printable characters without spaces'],
      [() => new OperatorTokens([{ name: 'a', secret: GOOD, environments: [] }]), 'operator token 1: name at least one environment (or * for every one)'],
      [() => new OperatorTokens([]), 'no operator tokens'],
    );
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
      expect(String(caught)).not.toContain(GOOD);
    }
    expect(parseOperatorTokenLine('   # x', 'here')).toBeUndefined();
  });

  it('a reload revokes the tokens gone or changed, tells its listeners their names, and keeps the others', () => {
    const tokens = new OperatorTokens([
      { name: 'keep', secret: GOOD },
      { name: 'gone', role: 'view', secret: OTHER },
      { name: 'narrowed', environments: ['a', 'b'], secret: 'narrowed-token-0123456789' },
      { name: 'same-envs', environments: ['a', 'b'], secret: 'same-envs-token-0123456789' },
    ]);
    const heard: string[][] = [];
    const stop = tokens.onRevoke((names) => heard.push([...names]));
    const next = new OperatorTokens([
      { name: 'same-envs', environments: ['b', 'a'], secret: sha('same-envs-token-0123456789') },
      { name: 'narrowed', environments: ['a'], secret: 'narrowed-token-0123456789' },
      { name: 'keep', secret: sha(GOOD) },
    ]);
    expect([...tokens.replaceWith(next)]).toEqual(['gone', 'narrowed']);
    expect(heard).toEqual([['gone', 'narrowed']]);
    expect(tokens.authenticate(`Bearer ${OTHER}`)).toBeUndefined();
    expect(tokens.authenticate(`Bearer ${GOOD}`)?.name).toBe('keep');
    stop();
    tokens.replaceWith(new OperatorTokens([{ name: 'x', secret: OTHER }]));
    expect(heard).toHaveLength(1);
  });
});
