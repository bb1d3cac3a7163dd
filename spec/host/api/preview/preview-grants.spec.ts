/** Preview links and session cookies (issue 42): signed with the replica keys, scoped to one preview, expiring, ended by their maker's revocation. */
import type { PreviewGrant } from '../../../../src/host/api/preview/preview-grants';
import { PreviewGrants } from '../../../../src/host/api/preview/preview-grants';
import { ReplicaKeys } from '../../../../src/host/api/replica-keys';

const KEY_A = 'ka-0123456789abcdef0123456789abcdef';
const KEY_B = 'kb-0123456789abcdef0123456789abcdef';
const NOW = 1_800_000_000_000;
const WHERE = { environmentId: 'env-1', port: 3000 };
const LINK: PreviewGrant = { kind: 'link', environmentId: 'env-1', port: 3000, expiresAt: NOW + 3_600_000, maker: 'alice', seal: 'seal-1' };
const valid = (): boolean => true;

/** The text with one character of its payload (before the dot) changed. */
const tamperPayload = (text: string): string => {
  const payload = Buffer.from(text.slice(0, text.indexOf('.')), 'base64url').toString('utf8').replace('3000', '3001');
  return `${Buffer.from(payload).toString('base64url')}${text.slice(text.indexOf('.'))}`;
};

describe('PreviewGrants', () => {
  it('checks what it signed: the same grant back, of its kind, for its preview, before it expires', () => {
    const grants = new PreviewGrants(new ReplicaKeys([KEY_A]));
    const link = grants.sign(LINK);
    expect(link).toMatch(/^[A-Za-z0-9_-]+\.[0-9a-f]{64}$/);
    expect(grants.check(link, 'link', WHERE, NOW, valid)).toEqual(LINK);
    const session = grants.sign({ ...LINK, kind: 'session' });
    expect(grants.check(session, 'session', WHERE, NOW, valid)).toEqual({ ...LINK, kind: 'session' });
  });

  it('refuses a forged grant: a payload changed, a signature changed, one signed by another key, or not a grant at all', () => {
    const grants = new PreviewGrants(new ReplicaKeys([KEY_A]));
    const link = grants.sign(LINK);
    const signature = link.slice(link.indexOf('.') + 1);
    const flipped = `${link.slice(0, link.indexOf('.'))}.${signature.startsWith('0') ? '1' : '0'}${signature.slice(1)}`;
    expect(grants.check(tamperPayload(link), 'link', { ...WHERE, port: 3001 }, NOW, valid)).toBe('forged');
    expect(grants.check(flipped, 'link', WHERE, NOW, valid)).toBe('forged');
    expect(grants.check(new PreviewGrants(new ReplicaKeys([KEY_B])).sign(LINK), 'link', WHERE, NOW, valid)).toBe('forged');
    expect(grants.check('', 'link', WHERE, NOW, valid)).toBe('forged');
    expect(grants.check('.abc', 'link', WHERE, NOW, valid)).toBe('forged');
  });

  it('refuses a grant of another purpose as forged: a link is not a session, nor a session a link', () => {
    const grants = new PreviewGrants(new ReplicaKeys([KEY_A]));
    expect(grants.check(grants.sign(LINK), 'session', WHERE, NOW, valid)).toBe('forged');
    expect(grants.check(grants.sign({ ...LINK, kind: 'session' }), 'link', WHERE, NOW, valid)).toBe('forged');
  });

  it('refuses a grant at and after its expiry, and takes it just before', () => {
    const grants = new PreviewGrants(new ReplicaKeys([KEY_A]));
    const link = grants.sign(LINK);
    expect(grants.check(link, 'link', WHERE, LINK.expiresAt - 1, valid)).toEqual(LINK);
    expect(grants.check(link, 'link', WHERE, LINK.expiresAt, valid)).toBe('expired');
    expect(grants.check(link, 'link', WHERE, LINK.expiresAt + 86_400_000, valid)).toBe('expired');
  });

  it('refuses a grant for another port or another environment', () => {
    const grants = new PreviewGrants(new ReplicaKeys([KEY_A]));
    const link = grants.sign(LINK);
    expect(grants.check(link, 'link', { ...WHERE, port: 3001 }, NOW, valid)).toBe('other preview');
    expect(grants.check(link, 'link', { ...WHERE, environmentId: 'env-2' }, NOW, valid)).toBe('other preview');
  });

  it('refuses a grant its maker no longer makes valid (revoked), and asks with the grant it carries', () => {
    const grants = new PreviewGrants(new ReplicaKeys([KEY_A]));
    const asked: PreviewGrant[] = [];
    const revoked = (grant: PreviewGrant): boolean => {
      asked.push(grant);
      return false;
    };
    expect(grants.check(grants.sign(LINK), 'link', WHERE, NOW, revoked)).toBe('revoked');
    expect(asked).toEqual([LINK]);
  });

  it('takes a grant signed with key A under keys [B, A] (a rotation), and refuses it as forged under [B] alone', () => {
    const link = new PreviewGrants(new ReplicaKeys([KEY_A])).sign(LINK);
    expect(new PreviewGrants(new ReplicaKeys([KEY_B, KEY_A])).check(link, 'link', WHERE, NOW, valid)).toEqual(LINK);
    expect(new PreviewGrants(new ReplicaKeys([KEY_B])).check(link, 'link', WHERE, NOW, valid)).toBe('forged');
  });

  it('sees a reload of its keys at once (ReplicaKeys.replaceWith)', () => {
    const keys = new ReplicaKeys([KEY_A]);
    const grants = new PreviewGrants(keys);
    const link = grants.sign(LINK);
    keys.replaceWith(new ReplicaKeys([KEY_B]));
    expect(grants.check(link, 'link', WHERE, NOW, valid)).toBe('forged');
  });

  it("derives a seal key from the signing key and the grant's scope: another scope or key, another seal key", () => {
    const scope = { environmentId: 'env-1', port: 3000, expiresAt: LINK.expiresAt, maker: 'alice' };
    const grants = new PreviewGrants(new ReplicaKeys([KEY_A]));
    expect(grants.sealKey(scope)).toBe(new PreviewGrants(new ReplicaKeys([KEY_A, KEY_B])).sealKey(scope));
    expect(grants.sealKey(scope)).not.toBe(grants.sealKey({ ...scope, port: 3001 }));
    expect(grants.sealKey(scope)).not.toBe(grants.sealKey({ ...scope, maker: 'bob' }));
    expect(grants.sealKey(scope)).not.toBe(new PreviewGrants(new ReplicaKeys([KEY_B, KEY_A])).sealKey(scope));
  });
});
