/** The replica keys (issue 39): what a key file may hold, and what a signature proves. */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../src/errors';
import type { SignedForward } from '../../../src/host/api/replica-keys';
import { loadReplicaKeys, ReplicaKeys, SIGNATURE_SKEW_MS } from '../../../src/host/api/replica-keys';

const K1 = 'k1-0123456789abcdef0123456789abcdef';
const K2 = 'k2-0123456789abcdef0123456789abcdef';
const NOW = 1_800_000_000_000;
const FORWARD: SignedForward = { method: 'POST', target: '/api/v1/environments/e/processes', by: 'replica-a', client: '10.0.0.9', identity: 'eyJ9', hops: 1, at: NOW };

describe('ReplicaKeys', () => {
  it('takes one key, or two during a rotation, each of 32 characters or more, no whitespace, not twice', () => {
    expect(new ReplicaKeys([K1]).size).toBe(1);
    expect(new ReplicaKeys([K1, K2]).size).toBe(2);
    expect(() => new ReplicaKeys(['short'])).toThrow(ConfigError);
    expect(() => new ReplicaKeys(['short'])).toThrow(/at least 32 characters/);
    expect(() => new ReplicaKeys([K1, K2, `k3${K1}`])).toThrow(/3 keys: one, or two during a rotation/);
    expect(() => new ReplicaKeys([K1, K1])).toThrow(/the same key twice/);
    expect(() => new ReplicaKeys([])).toThrow(/no replica key/);
    expect(() => new ReplicaKeys([`${K1} ${K2}`])).toThrow(/no whitespace/);
  });

  it('signs with the first key; a signature verifies with any key in use, and with no other', () => {
    const rotating = new ReplicaKeys([K2, K1]);
    const signature = new ReplicaKeys([K1]).sign(FORWARD);
    expect(signature).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(rotating.verify(FORWARD, signature, NOW)).toBeUndefined();
    expect(new ReplicaKeys([K2]).verify(FORWARD, signature, NOW)).toBe('bad signature');
    expect(rotating.sign(FORWARD)).toBe(new ReplicaKeys([K2]).sign(FORWARD));
  });

  it('covers every field: a change to any of them breaks the signature', () => {
    const keys = new ReplicaKeys([K1]);
    const signature = keys.sign(FORWARD);
    const changed: SignedForward[] = [
      { ...FORWARD, method: 'DELETE' },
      { ...FORWARD, target: '/api/v1/environments/other/processes' },
      { ...FORWARD, by: 'replica-b' },
      { ...FORWARD, client: '10.0.0.10' },
      { ...FORWARD, identity: 'eyJh' },
      { ...FORWARD, hops: 2 },
      { ...FORWARD, at: NOW + 1 },
    ];
    for (const forward of changed) expect(keys.verify(forward, signature, NOW)).toBe('bad signature');
    expect(keys.verify(FORWARD, 'v1=zz', NOW)).toBe('bad signature');
    expect(keys.verify(FORWARD, `v2=${signature.slice(3)}`, NOW)).toBe('bad signature');
  });

  it('refuses a signature older or newer than the skew allows', () => {
    const keys = new ReplicaKeys([K1]);
    const signature = keys.sign(FORWARD);
    expect(keys.verify(FORWARD, signature, NOW + SIGNATURE_SKEW_MS)).toBeUndefined();
    expect(keys.verify(FORWARD, signature, NOW + SIGNATURE_SKEW_MS + 1)).toBe('expired');
    expect(keys.verify(FORWARD, signature, NOW - SIGNATURE_SKEW_MS - 1)).toBe('expired');
  });

  it('takes the keys of a reload in place, and names the signing key by a digest, never the key', () => {
    const keys = new ReplicaKeys([K1]);
    const before = keys.signingDigest;
    keys.replaceWith(new ReplicaKeys([K2, K1]));
    expect(keys.size).toBe(2);
    expect(keys.signingDigest).not.toBe(before);
    expect(keys.signingDigest).toMatch(/^[0-9a-f]{12}$/);
    expect(K2).not.toContain(keys.signingDigest);
  });
});

describe('loadReplicaKeys', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'exec-rx-replica-keys-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a file of keys (comments and blank lines ignored), warning when others may read it', () => {
    const file = join(dir, 'keys');
    writeFileSync(file, `# rotation under way\n\n${K2}\n${K1}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
    const loaded = loadReplicaKeys(file);
    expect(loaded.keys.size).toBe(2);
    expect(loaded.warning).toBeUndefined();
    chmodSync(file, 0o644);
    expect(loadReplicaKeys(file).warning).toBe(`replica key file ${file} is readable by others; chmod 600 it`);
  });

  it('says which file and line does not fit, and never the key', () => {
    const file = join(dir, 'short');
    writeFileSync(file, `# a key\nsecret-but-short\n`, { mode: 0o600 });
    expect(() => loadReplicaKeys(file)).toThrow(`${file} line 2: a replica key is at least 32 characters (openssl rand -base64 32)`);
    expect(() => loadReplicaKeys(join(dir, 'missing'))).toThrow(`cannot read the replica key file ${join(dir, 'missing')}`);
  });
});
