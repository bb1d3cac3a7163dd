/**
 * The digest of the accepted operator tokens (`OperatorTokens.setDigest`, see `src/host/api/token-set-digest.ts`):
 * what replicas compare after a rolling reload. The same set gives the same digest in any order and however
 * the secret is written; any change of a name, role, environment or secret gives another; it shows neither a
 * token nor a token's digest.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OperatorTokenSpec } from '../../../src/host/api/operator-tokens';
import { loadOperatorTokens, OperatorTokens } from '../../../src/host/api/operator-tokens';

const CI = 'ci-operator-token-0123456789abcdef';
const DASH = 'dashboard-token-0123456789abcdef';
const sha = (token: string): string => createHash('sha256').update(token).digest('hex');

const SET: readonly OperatorTokenSpec[] = [
  { name: 'ci', role: 'operate', environments: ['build', 'test'], secret: CI },
  { name: 'dash', role: 'view', secret: DASH },
];

describe('the digest of the operator tokens set', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-set-digest-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    chmodSync(path, 0o600);
    return path;
  };

  it('is 16 hex digits, the same for the same set in another order, its environments reordered, its secrets as digests', () => {
    const digest = new OperatorTokens(SET).setDigest;
    expect(digest).toMatch(/^[0-9a-f]{16}$/);
    expect(new OperatorTokens([...SET].reverse()).setDigest).toBe(digest);
    const asDigests = [
      { name: 'dash', role: 'view', secret: `sha256:${sha(DASH).toUpperCase()}` },
      { name: 'ci', role: 'operate', environments: ['test', 'build'], secret: `sha256:${sha(CI)}` },
    ] as const;
    expect(new OperatorTokens(asDigests).setDigest).toBe(digest);
    // Two replicas' files, in another order: the same set.
    const first = loadOperatorTokens(file('a', `ci operate build,test ${CI}\ndash view * ${DASH}\n`), {});
    const second = loadOperatorTokens(file('b', `# reordered\ndash view * sha256:${sha(DASH)}\n\nci operate test,build ${CI}\n`), {});
    expect([first?.tokens.setDigest, second?.tokens.setDigest]).toEqual([digest, digest]);
  });

  it('is another for a changed name, role, environment list or secret, an added or a removed token', () => {
    const [ci, dash] = SET;
    if (ci === undefined || dash === undefined) throw new Error('the set has two tokens');
    const variants: Readonly<Record<string, readonly OperatorTokenSpec[]>> = {
      same: SET,
      name: [{ ...ci, name: 'ci2' }, dash],
      role: [{ ...ci, role: 'view' }, dash],
      environments: [{ ...ci, environments: ['build'] }, dash],
      everyEnvironment: [{ name: ci.name, role: 'operate', secret: CI }, dash],
      limited: [ci, { ...dash, environments: ['all'] }],
      secret: [{ ...ci, secret: `${CI}-rotated` }, dash],
      swapped: [{ ...ci, secret: DASH }, { ...dash, secret: CI }],
      removed: [ci],
      added: [...SET, { name: 'ops', secret: 'ops-operator-token-0123456789abcdef' }],
    };
    const digests = Object.values(variants).map((set) => new OperatorTokens(set).setDigest);
    expect(new Set(digests).size).toBe(digests.length);
  });

  it('stays the same across versions of exec-rx (replicas of two versions during a deploy compare it)', () => {
    // The first 16 hex digits of SHA-256("exec-rx operator token set v1\n" + JSON of the entries sorted by name,
    // each [name, role, sorted environments or null, hex SHA-256 of the token]), computed apart (Python's hashlib).
    expect(new OperatorTokens(SET).setDigest).toBe('610b56ec787359dc');
  });

  it('shows no token and no token digest', () => {
    const tokens = new OperatorTokens(SET);
    const digest = tokens.setDigest;
    for (const token of [CI, DASH]) {
      expect(digest.includes(token)).toBe(false);
      expect(token.includes(digest)).toBe(false);
      // Not a piece of the token's SHA-256 (what a tokens file may hold), in either case.
      expect(sha(token).includes(digest)).toBe(false);
      expect(sha(token).toUpperCase().includes(digest.toUpperCase())).toBe(false);
    }
  });

  it('follows a reload: another after replaceWith changed the set, the same when the new file only reorders it', () => {
    const tokens = new OperatorTokens(SET);
    const before = tokens.setDigest;
    tokens.replaceWith(new OperatorTokens([...SET].reverse()));
    expect(tokens.setDigest).toBe(before);
    const [ci] = SET;
    if (ci === undefined) throw new Error('the set has a token');
    const next = new OperatorTokens([ci]);
    tokens.replaceWith(next);
    expect(tokens.setDigest).not.toBe(before);
    expect(tokens.setDigest).toBe(next.setDigest);
    expect(tokens.setDigest).toBe(new OperatorTokens([ci]).setDigest);
  });
});
