import { ConfigError, HttpTargetRefusedError } from '../../src/errors';
import type { HttpTargetRefusal } from '../../src/errors';
import { HOP_BY_HOP, withoutHopByHop } from '../../src/http/http-headers';
import { HttpTargetPolicy, LOOPBACK_TARGETS } from '../../src/http/target-policy';

const loopback = HttpTargetPolicy.of(LOOPBACK_TARGETS);

/** The refusal `check` throws (fails the test when it accepts). */
function refusal(policy: HttpTargetPolicy, url: string): { reason: HttpTargetRefusal; target: string } {
  try {
    policy.check(url);
  } catch (error: unknown) {
    if (error instanceof HttpTargetRefusedError) return { reason: error.reason, target: error.target };
    throw error;
  }
  throw new Error(`${url} was accepted`);
}

describe('HttpTargetPolicy', () => {
  it('accepts the loopback addresses under the default and returns the parsed URL', () => {
    expect(loopback.check('http://127.0.0.1:8080/a?b=c').href).toBe('http://127.0.0.1:8080/a?b=c');
    expect(loopback.check(new URL('https://[::1]/')).href).toBe('https://[::1]/');
    expect(loopback.entries).toEqual(['127.0.0.1', '::1']);
  });

  it.each([
    ['http://10.0.0.1/', '10.0.0.1'],
    ['http://example.com/', 'example.com'],
    ['http://localhost:3000/', 'localhost'],
    ['http://[::2]/', '::2'],
  ])('refuses %s, which no entry names, as not-allowed', (url, target) => {
    expect(refusal(loopback, url)).toEqual({ reason: 'not-allowed', target });
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'metadata', '169.254.169.254'],
    ['http://169.254.170.2/', 'metadata', '169.254.170.2'],
    ['http://[fd00:ec2::254]/', 'metadata', 'fd00:ec2::254'],
    ['http://100.100.100.200/', 'metadata', '100.100.100.200'],
    ['http://168.63.129.16/', 'metadata', '168.63.129.16'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'metadata', 'metadata.google.internal'],
    ['http://Metadata.Google.Internal./', 'metadata', 'metadata.google.internal'],
    ['http://metadata/', 'metadata', 'metadata'],
    ['http://169.254.1.1/', 'link-local', '169.254.1.1'],
    ['http://[fe80::1]/', 'link-local', 'fe80::1'],
    ['http://[febf::1]/', 'link-local', 'febf::1'],
    ['http://0.0.0.0/', 'not-allowed', '0.0.0.0'],
    ['http://[::]/', 'not-allowed', '::'],
  ] as const)('refuses %s (%s) even when a range containing it is allowed', (url, reason, target) => {
    const wide = HttpTargetPolicy.of(['0.0.0.0/0', '::/0', '169.254.0.0/16', 'fe80::/10', 'fd00::/8']);
    expect(refusal(wide, url)).toEqual({ reason, target });
  });

  it('reaches a metadata, link-local or unspecified target only when an entry names it exactly', () => {
    const exact = HttpTargetPolicy.of(['169.254.169.254', 'metadata.google.internal.', '[fe80::1]', '169.254.1.1', '0.0.0.0', '::']);
    for (const url of ['http://169.254.169.254/', 'http://METADATA.google.internal/', 'http://[fe80::1]/', 'http://169.254.1.1/', 'http://0.0.0.0/', 'http://[::]/']) {
      expect(() => exact.check(url)).not.toThrow();
    }
    expect(refusal(exact, 'http://169.254.1.2/').reason).toBe('link-local');
  });

  const ALTERNATIVE_LOOPBACK = ['http://127.1/', 'http://2130706433/', 'http://0x7f000001/', 'http://0177.0.0.1/', 'http://0x7f.1/', 'http://[::ffff:127.0.0.1]/'];

  it.each(ALTERNATIVE_LOOPBACK)('refuses %s as 127.0.0.1 when only ::1 is allowed', (url) => {
    expect(refusal(HttpTargetPolicy.of(['::1']), url)).toEqual({ reason: 'not-allowed', target: '127.0.0.1' });
  });

  it.each(ALTERNATIVE_LOOPBACK)('accepts %s under the default, normalised to 127.0.0.1', (url) => {
    expect(loopback.check(`${url}p?q=1`).href).toBe('http://127.0.0.1/p?q=1');
  });

  it('checks an IPv4-mapped address against the IPv4 entries, and a mapped range as its IPv4 range', () => {
    expect(refusal(loopback, 'http://[::ffff:169.254.169.254]/')).toEqual({ reason: 'metadata', target: '169.254.169.254' });
    const mapped = HttpTargetPolicy.of(['::ffff:10.0.0.0/104']);
    expect(mapped.entries).toEqual(['10.0.0.0/8']);
    expect(mapped.check('http://10.1.2.3/').hostname).toBe('10.1.2.3');
  });

  it('refuses a scheme other than http: and https:', () => {
    expect(refusal(loopback, 'ftp://127.0.0.1/file')).toEqual({ reason: 'scheme', target: '127.0.0.1' });
    expect(refusal(loopback, 'file:///etc/passwd').reason).toBe('scheme');
    expect(refusal(loopback, 'ws://127.0.0.1/').reason).toBe('scheme');
  });

  it('refuses a URL with credentials, naming only the host', () => {
    expect(refusal(loopback, 'http://u:p@127.0.0.1/')).toEqual({ reason: 'credentials', target: '127.0.0.1' });
    expect(refusal(loopback, 'http://u@127.0.0.1/').reason).toBe('credentials');
    expect(() => loopback.check('http://u:secret@127.0.0.1/')).toThrow(/^http target 127\.0\.0\.1 refused \(credentials\)/);
  });

  it('refuses what does not parse as malformed, naming the input cut to 100 characters', () => {
    expect(refusal(loopback, 'not a url')).toEqual({ reason: 'malformed', target: 'not a url' });
    expect(refusal(loopback, 'http://[::1/')).toEqual({ reason: 'malformed', target: 'http://[::1/' });
    expect(refusal(loopback, `http://a b/${'x'.repeat(200)}`).target).toHaveLength(100);
  });

  it('accepts a name an entry names exactly, case-insensitive and without the trailing dot', () => {
    const named = HttpTargetPolicy.of(['Example.COM.', 'api.internal']);
    expect(named.entries).toEqual(['example.com', 'api.internal']);
    expect(named.check('https://EXAMPLE.com./x').hostname).toBe('example.com.');
    expect(named.check('http://api.internal:8443/').port).toBe('8443');
    expect(refusal(named, 'http://www.example.com/')).toEqual({ reason: 'not-allowed', target: 'www.example.com' });
  });

  it('accepts an address a CIDR entry contains', () => {
    const ranges = HttpTargetPolicy.of(['10.0.0.0/8', '[fd00::]/8', '192.168.1.77/24']);
    expect(ranges.entries).toEqual(['10.0.0.0/8', 'fd00::/8', '192.168.1.0/24']);
    expect(ranges.check('http://10.200.3.4/').hostname).toBe('10.200.3.4');
    expect(ranges.check('http://[fd12:3456::1]/').hostname).toBe('[fd12:3456::1]');
    expect(ranges.check('http://192.168.1.5/').hostname).toBe('192.168.1.5');
    expect(refusal(ranges, 'http://11.0.0.1/').reason).toBe('not-allowed');
    expect(refusal(ranges, 'http://192.168.2.1/').reason).toBe('not-allowed');
  });

  it('takes an entry the URL parser reads as an address as that address', () => {
    expect(HttpTargetPolicy.of(['127.1', '[::FFFF:7f00:2]', '0:0::1']).entries).toEqual(['127.0.0.1', '127.0.0.2', '::1']);
  });

  it.each(['', 'http://127.0.0.1/', '10.0.0.0/33', '::/129', '10.0.0.0/x', 'exa mple.com', 'example.com:80', 'fe80::1%eth0', 'host/8', 'u@host'])(
    'throws ConfigError naming the bad entry %j',
    (entry) => {
      expect(() => HttpTargetPolicy.of(['127.0.0.1', entry])).toThrow(ConfigError);
      expect(() => HttpTargetPolicy.of([entry])).toThrow(JSON.stringify(entry));
    },
  );
});

describe('withoutHopByHop', () => {
  it('drops the hop-by-hop names, any proxy-* and what Connection names, keeping the rest in order', () => {
    const headers = [
      { name: 'Content-Type', value: 'text/plain' },
      { name: 'Connection', value: 'keep-alive, X-Trace , close' },
      { name: 'Keep-Alive', value: 'timeout=5' },
      { name: 'x-trace', value: '1' },
      { name: 'Transfer-Encoding', value: 'chunked' },
      { name: 'Proxy-Foo', value: 'x' },
      { name: 'host', value: 'evil.example' },
      { name: 'set-cookie', value: 'a=1' },
      { name: 'Upgrade', value: 'websocket' },
      { name: 'TE', value: 'trailers' },
      { name: 'trailer', value: 'x' },
    ];
    expect(withoutHopByHop(headers)).toEqual([
      { name: 'Content-Type', value: 'text/plain' },
      { name: 'host', value: 'evil.example' },
      { name: 'set-cookie', value: 'a=1' },
    ]);
    expect(headers).toHaveLength(11);
  });

  it('names the RFC 9110 hop-by-hop set', () => {
    expect([...HOP_BY_HOP].sort()).toEqual(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
  });
});
