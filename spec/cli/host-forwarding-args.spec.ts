/** `exec-rx host`'s forwarding flags (issue 39): what they need, and what an internal url may be. */
import { parseHostArgs, UsageError } from '../../src/cli/args';

const REDIS = ['--redis-url-file', '/etc/exec-rx/redis-url'];

describe('exec-rx host forwarding flags', () => {
  it('reads --replica-key-file, --internal-url and --internal-ca with a Redis url', () => {
    const options = parseHostArgs([...REDIS, '--replica-key-file', '/k', '--internal-url', 'https://10.0.0.11:8443', '--internal-ca', '/ca.pem']);
    expect({ key: options.replicaKeyFile, url: options.internalUrl, ca: options.internalCa }).toEqual({ key: '/k', url: 'https://10.0.0.11:8443', ca: '/ca.pem' });
    expect(parseHostArgs(REDIS).replicaKeyFile).toBeUndefined();
  });

  it('refuses them where they mean nothing, naming the flag', () => {
    expect(() => parseHostArgs(['--replica-key-file', '/k'])).toThrow(new UsageError('--replica-key-file goes with --redis-url-file (forwarding is between replicas)'));
    expect(() => parseHostArgs([...REDIS, '--internal-url', 'http://127.0.0.1:1'])).toThrow(new UsageError('--internal-url goes with --replica-key-file'));
    expect(() => parseHostArgs([...REDIS, '--internal-ca', '/ca.pem'])).toThrow(new UsageError('--internal-ca goes with --replica-key-file'));
  });

  it('takes an internal url of http(s)://HOST[:PORT] only: no path, query or credentials', () => {
    const withKey = [...REDIS, '--replica-key-file', '/k', '--internal-url'];
    for (const bad of ['10.0.0.11:8443', 'ftp://h', 'https://h/api', 'https://h?x=1', 'https://u:p@h']) {
      expect(() => parseHostArgs([...withKey, bad])).toThrow(new UsageError(`--internal-url expects http(s)://HOST[:PORT], not ${bad}`));
    }
    expect(parseHostArgs([...withKey, 'http://[::1]:8081']).internalUrl).toBe('http://[::1]:8081');
  });

  it('takes plain http only on loopback: off it, a forwarded call (an identity, a stdin body) goes over TLS', () => {
    const withKey = [...REDIS, '--replica-key-file', '/k', '--internal-url'];
    expect(() => parseHostArgs([...withKey, 'http://10.0.0.11:8081'])).toThrow(
      new UsageError("--internal-url is https off loopback (forwarded calls carry an operator's identity), not http://10.0.0.11:8081"),
    );
    expect(parseHostArgs([...withKey, 'http://127.0.0.1:8081']).internalUrl).toBe('http://127.0.0.1:8081');
    expect(parseHostArgs([...withKey, 'https://10.0.0.11:8443']).internalUrl).toBe('https://10.0.0.11:8443');
  });
});
