/**
 * Issue 39, any replica serves any call: three `exec-rx host` replicas on one real redis-server behind a
 * real HAProxy running the README's configuration (docs/haproxy.cfg), one executor dialling the balancer.
 * Owner-only calls (start, stdin, stdin end, wait, interrupt, terminate, release) sent with plain `fetch`
 * to the balancer's url, and straight to each replica that is not the owner, are forwarded to the owner:
 * none is answered 503. Three replicas, so that a balancer retry cannot hide a missing forward. The same
 * calls to replicas without a replica key are answered 503 `ENVIRONMENT_ELSEWHERE` (what the first test
 * would see without forwarding). A forwarded identity claimed from outside is ignored; a forward signed
 * with a retired key is refused, and accepted again once the key is back during a rotation.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { paths } from '../host/api/api-client';
import type { SpecHaproxy } from '../support/haproxy';
import { startHaproxy } from '../support/haproxy';
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';
import { startDirectExecutor } from '../support/executor';
import {
  FORWARDED_AT_HEADER,
  FORWARDED_BY_HEADER,
  FORWARDED_FOR_HEADER,
  FORWARDED_HOPS_HEADER,
  FORWARDED_IDENTITY_HEADER,
  FORWARDED_SIGNATURE_HEADER,
} from '../../src/host/api/forwarding';
import { ReplicaKeys } from '../../src/host/api/replica-keys';
import type { Replica, ReplicaCluster, ReplicaCredentials } from './replicas';
import { replicaCluster, whichSays } from './replicas';

jest.setTimeout(240_000);

const CREDENTIALS: ReplicaCredentials = { keyId: 'AKIDREPLICAFORWARD', secret: 'replica-forward-secret-do-not-print', token: 'replica-forward-token-do-not-print' };
const ENV = 'forward-1';
const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

/** One answer, as a plain `fetch` saw it. */
interface Answer {
  readonly status: number;
  readonly code: string | undefined;
  readonly body: unknown;
  readonly forwardedBy: string | null;
  readonly replica: string | null;
}

/** A plain `fetch` of `path` on `base` with the operator token (or `headers` as given). */
async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = { authorization: `Bearer ${CREDENTIALS.token}` }): Promise<Answer> {
  const init: RequestInit = { method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: kept as text.
  }
  const code = typeof parsed === 'object' && parsed !== null && 'code' in parsed && typeof parsed.code === 'string' ? parsed.code : undefined;
  return { status: response.status, code, body: parsed, forwardedBy: response.headers.get(FORWARDED_BY_HEADER), replica: response.headers.get('exec-rx-host-replica') };
}

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/**
 * Ten owner-only calls through `base`, two processes' lives: a start with stdin, a write, the end of its
 * stdin, its wait (exit 3 after echoing what it read) and its release; a start of a sleeper, its
 * interrupt, its terminate, its wait and its release. Resolves with every answer, in order.
 */
async function tenCalls(base: string, round: string): Promise<Answer[]> {
  const answers: Answer[] = [];
  const take = (answer: Answer): Answer => (answers.push(answer), answer);
  const processes = paths.processes(ENV);
  const first = take(await call(base, 'POST', processes, { argv: ['sh', '-c', 'read line; test "$line" = go && exit 3; exit 4'], pipeStdin: true, env: PATH_ENV }));
  const firstId = (first.body as { id?: string }).id ?? 'none';
  take(await call(base, 'POST', paths.stdin(ENV, firstId), { writeId: `w-${round}`, data: b64('go\n') }));
  take(await call(base, 'POST', `${paths.process(ENV, firstId)}/stdin/end`));
  take(await call(base, 'POST', `${paths.process(ENV, firstId)}/wait`));
  take(await releaseOnceClosed(base, firstId));
  const second = take(await call(base, 'POST', processes, { argv: ['sleep', '30'], env: PATH_ENV }));
  const secondId = (second.body as { id?: string }).id ?? 'none';
  take(await call(base, 'POST', `${paths.process(ENV, secondId)}/interrupt`));
  take(await call(base, 'POST', `${paths.process(ENV, secondId)}/terminate`));
  take(await call(base, 'POST', `${paths.process(ENV, secondId)}/wait`));
  take(await releaseOnceClosed(base, secondId));
  return answers;
}

/** A release of `processId` through `base`, sent again while it answers 409 PROCESS_RUNNING (its close is on its way after the exit). */
async function releaseOnceClosed(base: string, processId: string): Promise<Answer> {
  for (let attempt = 0; ; attempt++) {
    const answer = await call(base, 'DELETE', paths.process(ENV, processId));
    if (answer.code !== 'PROCESS_RUNNING' || attempt === 50) return answer;
    await call(base, 'POST', `${paths.process(ENV, processId)}/wait`);
  }
}

/** The statuses ten calls must get. */
const EXPECTED = [201, 200, 200, 200, 204, 201, 200, 200, 200, 204];

/** Starts replicas a, b and c with `args`, HAProxy in front, and the executor; resolves with the owner. */
async function threeReplicas(cluster: ReplicaCluster, args: readonly string[]): Promise<{ replicas: Replica[]; owner: Replica; balancer: SpecHaproxy; executor: SpawnedExecutor }> {
  const replicas = [await cluster.start('a', args), await cluster.start('b', args), await cluster.start('c', args)];
  const balancer = await startHaproxy({ backends: replicas.map((r) => ({ name: r.name, port: r.port })) });
  const executor = await startDirectExecutor({ remoteUrl: balancer.url, environmentId: ENV, credentials: { accessKeyId: CREDENTIALS.keyId, secretAccessKey: CREDENTIALS.secret } });
  try {
    const owner = await whichSays(replicas, `environment ${ENV} generation 1: connected`, 30_000);
    return { replicas, owner, balancer, executor };
  } catch (error: unknown) {
    await executor.stop();
    await balancer.stop();
    throw error;
  }
}

/** Signs a forward of `method path` as replica `by` would, with `keys`. */
function forgedForward(keys: ReplicaKeys, method: string, path: string, by: string): Record<string, string> {
  const identity = Buffer.from(JSON.stringify({ name: 'env', role: 'operate', environments: null })).toString('base64url');
  const at = Date.now();
  const signature = keys.sign({ method, target: path, by, client: '127.0.0.1', identity, hops: 1, at });
  return {
    [FORWARDED_BY_HEADER]: by,
    [FORWARDED_FOR_HEADER]: '127.0.0.1',
    [FORWARDED_IDENTITY_HEADER]: identity,
    [FORWARDED_HOPS_HEADER]: '1',
    [FORWARDED_AT_HEADER]: String(at),
    [FORWARDED_SIGNATURE_HEADER]: signature,
  };
}

const newKey = (): string => randomBytes(32).toString('base64');

describe('three replicas behind HAProxy, forwarding owner-only calls to the owner', () => {
  const cluster = replicaCluster('replica-forward', CREDENTIALS);
  let work: string;
  let keyFile: string;
  const firstKey = newKey();
  let balancer: SpecHaproxy | undefined;
  let executor: SpawnedExecutor | undefined;
  let replicas: Replica[] = [];
  let owner: Replica | undefined;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-forward-keys-'));
    keyFile = join(work, 'replica-key');
    writeFileSync(keyFile, `# the replicas' key\n${firstKey}\n`, { mode: 0o600 });
    ({ replicas, owner, balancer, executor } = await threeReplicas(cluster, ['--replica-key-file', keyFile]));
  });
  afterAll(async () => {
    await executor?.stop();
    await balancer?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const theOwner = (): Replica => {
    if (owner === undefined) throw new Error('no owner');
    return owner;
  };

  it('answers 300 calls through the balancer and 100 straight to each non-owner, none 503', async () => {
    const through = balancer?.url ?? '';
    const viaBalancer: Answer[] = [];
    for (let round = 0; round < 30; round++) viaBalancer.push(...(await tenCalls(through, `lb-${round}`)));
    expect(viaBalancer).toHaveLength(300);
    expect(viaBalancer.filter((a) => a.status === 503)).toEqual([]);
    expect(viaBalancer.map((a) => a.status)).toEqual(Array.from({ length: 30 }, () => EXPECTED).flat());
    // The balancer spread them: some landed on a non-owner and were forwarded.
    expect(viaBalancer.filter((a) => a.forwardedBy !== null).length).toBeGreaterThan(0);

    const ownerId = viaBalancer[0]?.replica;
    for (const other of replicas.filter((r) => r !== theOwner())) {
      const direct: Answer[] = [];
      for (let round = 0; round < 10; round++) direct.push(...(await tenCalls(other.base, `${other.name}-${round}`)));
      expect(direct).toHaveLength(100);
      expect(direct.filter((a) => a.status === 503)).toEqual([]);
      expect(direct.map((a) => a.status)).toEqual(Array.from({ length: 10 }, () => EXPECTED).flat());
      // Each was answered by the owner, forwarded by the replica it was sent to.
      expect(new Set(direct.map((a) => a.replica))).toEqual(new Set([ownerId]));
      const forwardedBy = new Set(direct.map((a) => a.forwardedBy));
      expect(forwardedBy.size).toBe(1);
      expect(forwardedBy.has(null)).toBe(false);
      // Its metrics count them: every one answered by the owner.
      expect(await cluster.metric(other, 'exec_rx_host_forwarded_calls_total', { outcome: 'answered' })).toBeGreaterThanOrEqual(100);
      expect(await cluster.metric(other, 'exec_rx_host_forwarded_calls_total', { outcome: 'owner_unreachable' })).toBe(0);
    }
    // Waits answered what the process did: exit 3 (it read "go"), and 130 (interrupted) or 137 (terminated).
    const waits = viaBalancer.filter((_a, i) => i % 10 === 3).map((a) => (a.body as { exitCode?: number }).exitCode);
    expect(new Set(waits)).toEqual(new Set([3]));
    // The owner's audit log names the replica that forwarded each act, and the client's address.
    expect(cluster.stderr(theOwner())).toMatch(/"act":"start".*"remoteAddress":"127\.0\.0\.1","forwardedBy":"[0-9a-f-]{36}"/);
  });

  it('holds a forwarded wait open until the process exits, and a ticket made on one replica opens the log on another', async () => {
    const [first, second] = replicas.filter((r) => r !== theOwner());
    if (first === undefined || second === undefined) throw new Error('two non-owners expected');
    const started = await call(first.base, 'POST', paths.processes(ENV), { argv: ['sh', '-c', 'read line; echo "got $line"; exit 7'], pipeStdin: true, env: PATH_ENV });
    const id = (started.body as { id: string }).id;
    // The long poll goes through one non-owner; the write that ends it through the other.
    let waited = false;
    const wait = call(first.base, 'POST', `${paths.process(ENV, id)}/wait`).then((answer) => ((waited = true), answer));
    const listed = await call(second.base, 'GET', paths.process(ENV, id));
    expect({ status: listed.status, state: (listed.body as { state?: string }).state, waited }).toEqual({ status: 200, state: 'running', waited: false });
    expect((await call(second.base, 'POST', paths.stdin(ENV, id), { writeId: 'w-wait', data: b64('done\n') })).status).toBe(200);
    const answer = await wait;
    expect({ status: answer.status, exitCode: (answer.body as { exitCode?: number }).exitCode, forwardedBy: answer.forwardedBy !== null }).toEqual({ status: 200, exitCode: 7, forwardedBy: true });
    // Its log, by a ticket made on the owner, downloaded from a replica that never wrote it.
    const ticket = await call(theOwner().base, 'POST', `${paths.process(ENV, id)}/log/tickets`);
    const url = (ticket.body as { url: string }).url;
    const download = await fetch(`${second.base}${url}`);
    expect({ status: download.status, text: await download.text() }).toEqual({ status: 200, text: 'got done\n' });
    expect((await fetch(`${first.base}${url}`)).status).toBe(401);
  });

  it('ignores a forwarded identity claimed from outside: stripped, the token (or none) decides', async () => {
    const onOwner = theOwner().base;
    const claims = { [FORWARDED_IDENTITY_HEADER]: Buffer.from(JSON.stringify({ name: 'mallory', role: 'operate', environments: null })).toString('base64url'), [FORWARDED_BY_HEADER]: 'x', [FORWARDED_HOPS_HEADER]: '1' };
    // No token: the claim alone does not authenticate.
    const bare = await call(onOwner, 'POST', paths.processes(ENV), { argv: ['true'] }, claims);
    expect({ status: bare.status, code: bare.code }).toEqual({ status: 401, code: 'UNAUTHORIZED' });
    // With a token: the token's identity acts, not the claim's.
    const started = await call(onOwner, 'POST', paths.processes(ENV), { argv: ['true'], env: PATH_ENV }, { ...claims, authorization: `Bearer ${CREDENTIALS.token}` });
    expect(started.status).toBe(201);
    expect(cluster.stderr(theOwner())).not.toContain('mallory');
    // A signature made with a key no replica holds is refused outright.
    const forged = await call(onOwner, 'POST', paths.processes(ENV), { argv: ['true'] }, forgedForward(new ReplicaKeys([newKey()]), 'POST', paths.processes(ENV), 'forger'));
    expect({ status: forged.status, code: forged.code }).toEqual({ status: 401, code: 'FORWARD_REFUSED' });
  });

  it('refuses a forward signed with a retired key, and takes it again while both keys are in the file', async () => {
    const target = theOwner();
    const path = paths.processes(ENV);
    const start = { argv: ['true'], env: PATH_ENV };
    const old = new ReplicaKeys([firstKey]);
    // Signed with the key in use: the owner takes it.
    expect((await call(target.base, 'POST', path, start, forgedForward(old, 'POST', path, 'spec'))).status).toBe(201);

    // The owner's file now holds only a new key (SIGHUP): the old one is retired there.
    const next = newKey();
    const reloads = cluster.stderr(target).split('SIGHUP: reload').length;
    writeFileSync(keyFile, `${next}\n`);
    chmodSync(keyFile, 0o600);
    target.run.child.kill('SIGHUP');
    await target.run.waitFor('stderr', /SIGHUP: reload: .*1 replica key\(s\)/, cluster.stderr(target).length);
    expect(cluster.stderr(target).split('SIGHUP: reload').length).toBe(reloads + 1);
    const retired = await call(target.base, 'POST', path, start, forgedForward(old, 'POST', path, 'spec'));
    expect({ status: retired.status, code: retired.code }).toEqual({ status: 401, code: 'FORWARD_REFUSED' });
    // A replica still signing with the retired key forwards; the owner refuses: the client is told so.
    const other = replicas.find((r) => r !== target);
    if (other === undefined) throw new Error('no other replica');
    const throughOther = await call(other.base, 'POST', path, start);
    expect({ status: throughOther.status, code: throughOther.code }).toEqual({ status: 401, code: 'FORWARD_REFUSED' });
    // The owner counts what it refused: a rotation half done shows there.
    expect(await cluster.metric(target, 'exec_rx_host_forwards_refused_total')).toBeGreaterThanOrEqual(2);

    // During a rotation the file holds both: the new one signs, the old one is still accepted.
    const mark = cluster.stderr(target).length;
    writeFileSync(keyFile, `${next}\n${firstKey}\n`);
    target.run.child.kill('SIGHUP');
    await target.run.waitFor('stderr', /SIGHUP: reload: .*2 replica key\(s\)/, mark);
    expect((await call(other.base, 'POST', path, start)).status).toBe(201);
    expect((await call(target.base, 'POST', path, start, forgedForward(old, 'POST', path, 'spec'))).status).toBe(201);
    // No key ever reaches a log.
    for (const replica of replicas) expect(cluster.stderr(replica)).not.toMatch(new RegExp(`${firstKey.slice(0, 16)}|${next.slice(0, 16)}`.replace(/[+/]/g, '\\$&')));
  });
});

describe('three replicas without a replica key (forwarding off)', () => {
  const cluster = replicaCluster('replica-no-forward', CREDENTIALS);
  let balancer: SpecHaproxy | undefined;
  let executor: SpawnedExecutor | undefined;
  let replicas: Replica[] = [];
  let owner: Replica | undefined;

  beforeAll(async () => {
    ({ replicas, owner, balancer, executor } = await threeReplicas(cluster, []));
  });
  afterAll(async () => {
    await executor?.stop();
    await balancer?.stop();
  });

  it('answers the same calls sent straight to a non-owner 503 ENVIRONMENT_ELSEWHERE (what the spec above fails on)', async () => {
    const other = replicas.find((r) => r !== owner);
    if (other === undefined) throw new Error('no other replica');
    const started = await call(other.base, 'POST', paths.processes(ENV), { argv: ['true'], env: PATH_ENV });
    expect({ status: started.status, code: started.code }).toEqual({ status: 503, code: 'ENVIRONMENT_ELSEWHERE' });
    const answers = await tenCalls(other.base, 'off');
    expect(answers.filter((a) => a.status === 503).length).toBeGreaterThan(0);
  });
});
