/**
 * Issue 39, download tickets shared by replicas: two in-process replicas (`startHostServer` with
 * `cluster`) on one real redis-server, each with its own connections to the Redis state, log and ticket
 * stores and its own copy of the same operator tokens, as `exec-rx host --redis-url-file` runs them. The
 * process is one whose log replica b writes into the shared log store (as it writes the log of a process
 * its executor runs): both replicas list it and serve its bytes (a from Redis).
 * - a ticket made (`POST …/log/tickets`) on one replica opens the log on the other, once: then it is
 *   refused (401) on both; one tried on another process is used up on both;
 * - a reload that revokes the caller's token makes its tickets fail on every replica: on the replica that
 *   reloaded (it checks the token's seal) and on the others (the replica that made them takes them out).
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import type { OperatorTokenSpec } from '../../src/host/api/operator-tokens';
import { OperatorTokens } from '../../src/host/api/operator-tokens';
import type { HostServer } from '../../src/host/host-options';
import { startHostServer } from '../../src/host/host-server';
import { RedisLogStore } from '../../src/store/redis/redis-log-store';
import { RedisStateStore } from '../../src/store/redis/redis-state-store';
import { RedisTicketStore } from '../../src/store/redis/redis-ticket-store';
import { closed, exited, output } from '../exec/event-builders';
import { ApiClient, paths } from '../host/api/api-client';
import { expectProblem, expectStatus } from '../host/api/api-host';
import type { SpecRedis } from '../support/redis-server';
import { startRedisServer } from '../support/redis-server';

const CREDENTIALS = { accessKeyId: 'AKIDSHAREDTICKETS', secretAccessKey: 'shared-tickets-secret-do-not-print' };
const WATCHER: OperatorTokenSpec = { name: 'watcher', role: 'view', secret: 'shared-tickets-watcher-token-do-not-print' };
const OPS: OperatorTokenSpec = { name: 'ops', role: 'operate', secret: 'shared-tickets-ops-token-do-not-print' };
const ENV = 'tickets-env';
const BYTES = 'downloaded through another replica\n';

/** One replica: its host, the tokens it accepts (reload them with `replaceWith`) and its log store. */
interface Replica {
  readonly host: HostServer;
  readonly tokens: OperatorTokens;
  readonly logs: RedisLogStore;
  readonly api: ApiClient;
}

describe('download tickets across replicas', () => {
  let redis: SpecRedis;
  let prefix: string;
  /** What a test opened, undone newest first after it: hosts, then stores, then connections. */
  const undo: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  beforeEach(() => {
    prefix = `shared-tickets-${randomBytes(6).toString('hex')}`;
  });
  afterEach(async () => {
    for (let step = undo.pop(); step !== undefined; step = undo.pop()) await step();
  });
  afterAll(async () => {
    await redis.stop();
  });

  /** A connection of the test's own, quit after it. */
  const connection = (): Redis => {
    const made = new Redis(redis.url, { commandTimeout: 2_000, maxRetriesPerRequest: 1 });
    undo.push(async () => void (await made.quit()));
    return made;
  };

  /** A replica of the test's cluster, as the command line makes one (see the module's doc). */
  async function replica(): Promise<Replica> {
    const stateRedis = connection();
    const state = await RedisStateStore.open({ redis: stateRedis, prefix, epochs: 'clock' });
    const logs = await RedisLogStore.open({ redis: connection(), prefix });
    const tickets = new RedisTicketStore({ redis: stateRedis, prefix });
    undo.push(() => Promise.all([state.close(), tickets.close()]).then(() => undefined));
    const tokens = new OperatorTokens([WATCHER, OPS]);
    const host = await startHostServer({
      credentials: new Map([[CREDENTIALS.accessKeyId, CREDENTIALS.secretAccessKey]]),
      log: () => undefined,
      cluster: { state, id: `cluster-${prefix}` },
      logStore: logs,
      tickets,
      operator: { tokens },
    });
    undo.push(() => host.close());
    return { host, tokens, logs, api: new ApiClient(host.url, null) };
  }

  /** Writes process `processId`'s whole log (its bytes, its exit, its close) through `writer`'s log store. */
  async function storedProcess(writer: Replica, processId: string): Promise<void> {
    const history = writer.logs.histories(ENV, { epoch: 1, writer: 'b' })(processId, { argv: ['echo'], tty: false });
    history.append(output(1, BYTES));
    history.append(exited(2, 0));
    history.append(closed(3));
    await writer.logs.flush();
  }

  /** A ticket's url for the log of `processId`, asked of `on` with `token`. */
  async function ticketUrl(on: Replica, processId: string, token: OperatorTokenSpec): Promise<string> {
    const answer = await on.api.as(token.secret).post(`${paths.process(ENV, processId)}/log/tickets`);
    return (expectStatus(answer, 201) as { url: string }).url;
  }

  const refused = async (on: Replica, url: string): Promise<void> => void expectProblem(await on.api.get(url), 401, 'UNAUTHORIZED', `cluster-${prefix}`);

  it('a ticket made on one replica opens the log on another, once: then both refuse it', async () => {
    const [a, b] = [await replica(), await replica()];
    await storedProcess(b, 'p-1');
    const url = await ticketUrl(a, 'p-1', WATCHER);
    const download = await b.api.get(url);
    expect({ status: download.status, text: download.text, disposition: download.headers['content-disposition'] }).toEqual({
      status: 200,
      text: BYTES,
      disposition: 'attachment; filename="p-1.log"',
    });
    await refused(a, url);
    await refused(b, url);
  });

  it('a ticket made on the replica that writes the log opens it whole on one that does not (read from Redis)', async () => {
    const [a, b] = [await replica(), await replica()];
    await storedProcess(b, 'p-1');
    // a never read this log: its reader learns what the log holds before it answers (was: 200, empty).
    const download = await a.api.get(await ticketUrl(b, 'p-1', WATCHER));
    expect({ status: download.status, text: download.text }).toEqual({ status: 200, text: BYTES });
    const again = await a.api.as(WATCHER.secret).get(`${paths.process(ENV, 'p-1')}/log`);
    expect({ status: again.status, text: again.text }).toEqual({ status: 200, text: BYTES });
  });

  it('a ticket tried on another process is used up on every replica', async () => {
    const [a, b] = [await replica(), await replica()];
    await storedProcess(b, 'p-1');
    await storedProcess(b, 'p-2');
    const url = await ticketUrl(a, 'p-1', WATCHER);
    await refused(b, url.replace('/p-1/', '/p-2/'));
    await refused(a, url);
  });

  it("a reload that revokes the caller's token makes its tickets fail on every replica", async () => {
    const [a, b] = [await replica(), await replica()];
    await storedProcess(b, 'p-1');
    // Made on a, b reloads without watcher: b refuses it (its seal names a token b no longer accepts).
    const madeOnA = await ticketUrl(a, 'p-1', WATCHER);
    const kept = await ticketUrl(a, 'p-1', OPS);
    expect(b.tokens.replaceWith(new OperatorTokens([OPS]))).toEqual(new Set(['watcher']));
    await refused(b, madeOnA);
    expect((await b.api.get(kept)).text).toBe(BYTES);
    // Made on a, a reloads with watcher's secret rotated: a takes its tickets out (its GETDEL is sent as the
    // reload returns, before the download below is), so b (which still accepts the old secret) refuses it too.
    b.tokens.replaceWith(new OperatorTokens([WATCHER, OPS]));
    const revokedOnA = await ticketUrl(a, 'p-1', WATCHER);
    expect(a.tokens.replaceWith(new OperatorTokens([{ ...WATCHER, secret: 'shared-tickets-watcher-rotated-do-not-print' }, OPS]))).toEqual(new Set(['watcher']));
    await refused(b, revokedOnA);
    await refused(a, revokedOnA);
  });
});
