/** What a replica takes from a call's forwarded-identity headers (issue 39): only a signed forward counts. */
import type { IncomingMessage } from 'node:http';
import { ApiProblem } from '../../../src/host/api/problem';
import {
  FORWARDED_AT_HEADER,
  FORWARDED_BY_HEADER,
  FORWARDED_FOR_HEADER,
  FORWARDED_HOPS_HEADER,
  FORWARDED_IDENTITY_HEADER,
  FORWARDED_SIGNATURE_HEADER,
  takeForwarded,
} from '../../../src/host/api/forwarding';
import { ReplicaKeys } from '../../../src/host/api/replica-keys';

const KEYS = new ReplicaKeys(['forwarded-headers-key-0123456789abcdef']);
const NOW = 1_800_000_000_000;
const PATH = '/api/v1/environments/e1/processes';
const identityOf = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A request as `http` gives it: its method, target and (lower-cased) headers. */
const requestOf = (headers: Record<string, string>, method = 'POST', url = PATH): IncomingMessage => ({ method, url, headers: { ...headers } }) as unknown as IncomingMessage;

/** Headers of a forward signed with `keys` (at `at`, `hops` hops) for `identity`. */
function signed(identity: string, keys = KEYS, at = NOW, hops = 1): Record<string, string> {
  const forward = { method: 'POST', target: PATH, by: 'replica-a', client: '10.1.2.3', identity, hops, at };
  return {
    [FORWARDED_BY_HEADER]: forward.by,
    [FORWARDED_FOR_HEADER]: forward.client,
    [FORWARDED_IDENTITY_HEADER]: identity,
    [FORWARDED_HOPS_HEADER]: String(hops),
    [FORWARDED_AT_HEADER]: String(at),
    [FORWARDED_SIGNATURE_HEADER]: keys.sign(forward),
  };
}

const refusal = (run: () => unknown): { status: number; code: string } | undefined => {
  try {
    run();
  } catch (error: unknown) {
    if (error instanceof ApiProblem) return { status: error.status, code: error.code };
    throw error;
  }
  return undefined;
};

describe('takeForwarded', () => {
  it('takes a forward signed with a key in use: the identity, the forwarding replica, the client; the headers are gone after', () => {
    const req = requestOf({ authorization: 'Bearer x', ...signed(identityOf({ name: 'ci', role: 'view', environments: ['e1'] })) });
    expect(takeForwarded(req, KEYS, NOW)).toEqual({ caller: { name: 'ci', role: 'view', environments: new Set(['e1']) }, by: 'replica-a', client: '10.1.2.3' });
    expect(Object.keys(req.headers)).toEqual(['authorization']);
  });

  it('strips claimed identity headers without a signature: ignored, as if never sent', () => {
    const req = requestOf({ [FORWARDED_IDENTITY_HEADER]: identityOf({ name: 'mallory', role: 'operate', environments: null }), [FORWARDED_BY_HEADER]: 'x', 'content-type': 'application/json' });
    expect(takeForwarded(req, KEYS, NOW)).toBeUndefined();
    expect(Object.keys(req.headers)).toEqual(['content-type']);
    expect(takeForwarded(requestOf({ 'content-type': 'application/json' }), undefined, NOW)).toBeUndefined();
  });

  it('refuses 401 FORWARD_REFUSED a signed forward it cannot take: another key, too old, a malformed identity, two hops, no key here', () => {
    const identity = identityOf({ name: 'ci', role: 'operate', environments: null });
    const other = new ReplicaKeys(['another-replica-key-0123456789abcdef']);
    const refused = { status: 401, code: 'FORWARD_REFUSED' };
    expect(refusal(() => takeForwarded(requestOf(signed(identity, other)), KEYS, NOW))).toEqual(refused);
    expect(refusal(() => takeForwarded(requestOf(signed(identity, KEYS, NOW - 61_000)), KEYS, NOW))).toEqual(refused);
    expect(refusal(() => takeForwarded(requestOf(signed(identityOf({ name: 'ci', role: 'admin', environments: null }))), KEYS, NOW))).toEqual(refused);
    expect(refusal(() => takeForwarded(requestOf(signed('not base64 json')), KEYS, NOW))).toEqual(refused);
    expect(refusal(() => takeForwarded(requestOf(signed(identity, KEYS, NOW, 2)), KEYS, NOW))).toEqual(refused);
    expect(refusal(() => takeForwarded(requestOf(signed(identity)), undefined, NOW))).toEqual(refused);
    // Signed for another method or path: not this call's signature.
    expect(refusal(() => takeForwarded(requestOf(signed(identity), 'DELETE'), KEYS, NOW))).toEqual(refused);
    expect(refusal(() => takeForwarded(requestOf(signed(identity), 'POST', `${PATH}?x=1`), KEYS, NOW))).toEqual(refused);
  });
});
