/**
 * A rolling reload of the operator tokens over two replicas, against real hosts (no executor: the probes,
 * the metrics and the operator API's own routes need none). Each replica reads its own tokens file (the
 * same tokens, in another order) and reloads on SIGHUP (`reloadOnHangup`, the CLI's own path, one replica
 * after the other): between the two reloads they answer a new token differently and show different
 * digests on `/readyz`, `/healthz` (both ports) and `exec_rx_host_operator_tokens_info`; once both
 * reloaded, the same one again.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reloadOnHangup } from '../../../src/cli/host-signals';
import { ACCESS_KEY_ID_ENV, SECRET_ACCESS_KEY_ENV } from '../../../src/host/host-credentials';
import type { OperatorTokens } from '../../../src/host/api/operator-tokens';
import { loadOperatorTokens } from '../../../src/host/api/operator-tokens';
import type { HostServer } from '../../../src/host/host-options';
import { startHostServer } from '../../../src/host/host-server';
import { TOKENS_DIGEST_HEADER } from '../../../src/wire/operator-api';
import { trackForCleanup } from '../../support/executor';
import { sampleValue, scrape } from '../../support/prom-text';
import type { ApiResponse } from './api-client';
import { ApiClient, paths, within } from './api-client';
import { EXECUTOR_CREDENTIALS } from './api-host';

const OLD = 'rolling-old-operator-token-0123456789';
const KEPT = 'rolling-kept-operator-token-0123456789';
const NEW = 'rolling-new-operator-token-0123456789';
const INFO = 'exec_rx_host_operator_tokens_info';
const COUNT = 'exec_rx_host_operator_tokens';
const ENV = { [ACCESS_KEY_ID_ENV]: EXECUTOR_CREDENTIALS.accessKeyId, [SECRET_ACCESS_KEY_ENV]: EXECUTOR_CREDENTIALS.secretAccessKey };

/** One replica: a host on its own tokens file. */
interface Replica {
  readonly host: HostServer;
  readonly file: string;
  readonly tokens: OperatorTokens;
  readonly keys: Map<string, string>;
  readonly api: ApiClient;
  /** The probes on its metrics port. */
  readonly metricsPort: ApiClient;
}

describe('the operator tokens digest across replicas, through a rolling SIGHUP', () => {
  let dir: string;
  let a: Replica;
  let b: Replica;

  const write = (file: string, text: string): void => {
    writeFileSync(file, text);
    chmodSync(file, 0o600);
  };

  async function startReplica(name: string, text: string): Promise<Replica> {
    const file = join(dir, name);
    write(file, text);
    const loaded = loadOperatorTokens(file, {});
    if (loaded === undefined) throw new Error(`${file} holds no token`);
    const keys = new Map([[EXECUTOR_CREDENTIALS.accessKeyId, EXECUTOR_CREDENTIALS.secretAccessKey]]);
    const host = trackForCleanup(await startHostServer({ credentials: keys, log: () => undefined, metricsPort: 0, operator: { tokens: loaded.tokens } }));
    const metricsUrl = host.metricsUrl;
    if (metricsUrl === undefined) throw new Error('the host has no metrics endpoint');
    return { host, file, tokens: loaded.tokens, keys, api: new ApiClient(host.url, null), metricsPort: new ApiClient(metricsUrl.replace(/\/metrics$/, ''), null) };
  }

  /**
   * SIGHUP with only `replica`'s reload listening (one step of the operator's loop); resolves with its line.
   * Emitted on `process` (what `reloadOnHangup` listens on): under jest, `process` is the sandbox's copy, and
   * a real signal would reach only the worker's own process, which has no listener and would end.
   */
  async function hangUp(replica: Replica): Promise<string> {
    let stop = (): void => undefined;
    const line = new Promise<string>((resolve) => {
      stop = reloadOnHangup({ operatorTokensFile: replica.file, credentialsFile: undefined, env: ENV, tokens: replica.tokens, keys: replica.keys, local: undefined, log: resolve });
    });
    try {
      process.emit('SIGHUP', 'SIGHUP');
      return await within(line, 10_000, 'the reload on SIGHUP');
    } finally {
      stop();
    }
  }

  /** The digest each probe of `replica` names: `/readyz` and `/healthz` (GET, HEAD) on both of its ports. */
  async function probeDigests(replica: Replica): Promise<readonly (string | string[] | undefined)[]> {
    const answers: ApiResponse[] = [];
    for (const client of [replica.api, replica.metricsPort]) {
      const ready = await client.get('/readyz');
      expect([ready.status, ready.body]).toEqual([200, { status: 'ready' }]);
      answers.push(ready, await client.request('HEAD', '/readyz'), await client.get('/healthz'));
    }
    return answers.map((answer) => answer.headers[TOKENS_DIGEST_HEADER]);
  }

  /** The `exec_rx_host_operator_tokens_info` samples of a fresh scrape (digest and value), and the count. */
  async function tokenMetrics(replica: Replica): Promise<{ readonly info: readonly (readonly [string | undefined, number])[]; readonly count: number }> {
    const exposition = await scrape(replica.host.metricsUrl ?? '');
    expect(exposition.types.get(INFO)).toBe('gauge');
    const info = exposition.samples.filter((sample) => sample.name === INFO).map((sample) => [sample.labels['digest'], sample.value] as const);
    return { info, count: sampleValue(exposition, COUNT) };
  }

  /** The status `token` gets from `replica`'s operator API. */
  const statusOf = async (replica: Replica, token: string): Promise<number> => (await replica.api.as(token).get(paths.host)).status;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-tokens-digest-'));
    a = await startReplica('a', `old operate * ${OLD}\nkept view * ${KEPT}\n`);
    b = await startReplica('b', `# the same tokens, in another order\nkept view * ${KEPT}\nold operate * ${OLD}\n`);
  });

  afterAll(async () => {
    await a.host.close();
    await b.host.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the same digest on every probe and in the metrics of replicas with the same set, in any order', async () => {
    const digest = a.tokens.setDigest;
    expect(digest).toMatch(/^[0-9a-f]{16}$/);
    expect(b.tokens.setDigest).toBe(digest);
    for (const replica of [a, b]) {
      expect(await probeDigests(replica)).toEqual(Array.from({ length: 6 }, () => digest));
      expect(await tokenMetrics(replica)).toEqual({ info: [[digest, 1]], count: 2 });
    }
  });

  it('tells the replicas apart between their reloads, and agrees again once the last one reloaded', async () => {
    const before = a.tokens.setDigest;
    const next = `old operate * ${OLD}\nkept view * ${KEPT}\nnew operate build ${NEW}\n`;
    write(a.file, next);
    write(b.file, next);

    // The first replica reloaded: a new token is accepted there, 401 on the other (the split answers).
    expect(await hangUp(a)).toMatch(/^SIGHUP: reload: 3 operator token\(s\) from /);
    const after = a.tokens.setDigest;
    expect(after).not.toBe(before);
    expect([await statusOf(a, NEW), await statusOf(b, NEW)]).toEqual([200, 401]);
    expect(await probeDigests(a)).toEqual(Array.from({ length: 6 }, () => after));
    expect(await probeDigests(b)).toEqual(Array.from({ length: 6 }, () => before));
    // Only the set accepted now has its sample: the old digest is gone from the reloaded replica.
    expect(await tokenMetrics(a)).toEqual({ info: [[after, 1]], count: 3 });
    expect(await tokenMetrics(b)).toEqual({ info: [[before, 1]], count: 2 });

    // The last replica reloaded: every replica answers the same again.
    await hangUp(b);
    expect([await statusOf(a, NEW), await statusOf(b, NEW)]).toEqual([200, 200]);
    expect(await probeDigests(b)).toEqual(Array.from({ length: 6 }, () => after));
    expect(await tokenMetrics(b)).toEqual({ info: [[after, 1]], count: 3 });
  });

  it('puts no token, nor a token digest, in a probe header or a metric', async () => {
    const labels = (await scrape(a.host.metricsUrl ?? '')).samples.flatMap((sample) => Object.values(sample.labels));
    const header = String((await a.api.get('/readyz')).headers[TOKENS_DIGEST_HEADER]);
    for (const token of [OLD, KEPT, NEW]) {
      const digest = createHash('sha256').update(token).digest('hex');
      expect(labels.filter((value) => value.includes(token) || value.includes(digest))).toEqual([]);
      expect([header.includes(token), token.includes(header), digest.includes(header)]).toEqual([false, false, false]);
    }
  });

  it('sends no digest from a host without an operator API', async () => {
    const keys = new Map([[EXECUTOR_CREDENTIALS.accessKeyId, EXECUTOR_CREDENTIALS.secretAccessKey]]);
    const host = trackForCleanup(await startHostServer({ credentials: keys, log: () => undefined, metricsPort: 0 }));
    try {
      const ready = await new ApiClient(host.url, null).get('/readyz');
      expect([ready.status, ready.headers[TOKENS_DIGEST_HEADER]]).toEqual([200, undefined]);
      expect((await scrape(host.metricsUrl ?? '')).types.has(INFO)).toBe(false);
    } finally {
      await host.close();
    }
  });
});
