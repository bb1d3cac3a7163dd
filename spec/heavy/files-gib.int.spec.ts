/**
 * Issue 41's acceptance, at full size: a 1 GiB file round-trips sha256-exact through a real host and a
 * real codex executor (on this machine, so an environment's path is a path here too) by a plain `fetch`
 * upload (PUT, streamed) and download (GET), and by the built `exec-rx cp` both ways; a directory of 5,000
 * files goes up and down with `exec-rx cp`, compared entry by entry. The host's token rate is raised (cp
 * makes about one request per file; see `--api-rate`).
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ApiHost } from '../host/api/api-host';
import { OPERATOR_TOKEN, startApiHost } from '../host/api/api-host';
import { runCliBytes } from '../cli/cli-process';

jest.setTimeout(600_000);

const ENV = 'cli-cp-large';
const GIB = 1024 * 1024 * 1024;
const BLOCK = 1024 * 1024;
const TREE_FILES = 5000;

/** `bytes` bytes, each 1 MiB block distinct (its index hashed into its first 32 bytes of a random block). */
function* blocks(bytes: number, seed: Buffer): Generator<Buffer> {
  for (let i = 0; i * BLOCK < bytes; i += 1) {
    const block = Buffer.from(seed);
    createHash('sha256').update(String(i)).digest().copy(block);
    yield block.subarray(0, Math.min(BLOCK, bytes - i * BLOCK));
  }
}

/** The sha256 of a local file, streamed. */
async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: BLOCK })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Every file under `root`: relative path → sha256. */
function tree(root: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(join(root, prefix), { withFileTypes: true })) {
    const relative = join(prefix, entry.name);
    if (entry.isDirectory()) Object.assign(out, tree(root, relative));
    else out[relative] = createHash('sha256').update(readFileSync(join(root, relative))).digest('hex');
  }
  return out;
}

describe('1 GiB and 5,000 files through the host', () => {
  let setup: ApiHost;
  let work: string;
  let env: NodeJS.ProcessEnv;
  const seed = Buffer.alloc(BLOCK, 0x5a);
  const contentUrl = (path: string): string => `${setup.host.url}/api/v1/environments/${ENV}/files/content?path=${encodeURIComponent(path)}`;
  const auth = { authorization: `Bearer ${OPERATOR_TOKEN}` };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-cp-large-'));
    setup = await startApiHost({ environmentId: ENV, operator: { requestsPerSecond: 100_000, requestBurst: 200_000 } });
    env = { ...process.env, EXEC_RX_HOST: setup.host.url, EXEC_RX_TOKEN: OPERATOR_TOKEN };
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('round-trips 1 GiB sha256-exact: PUT and GET by fetch, then exec-rx cp up and down', async () => {
    const local = join(work, 'gib.bin');
    await pipeline(Readable.from(blocks(GIB, seed)), createWriteStream(local));
    const expected = await sha256Of(local);

    // PUT, streamed from the file (the host holds a few blocks, not the file).
    const uploaded = join(work, 'put.bin');
    const put = await fetch(contentUrl(uploaded), {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/octet-stream', 'content-length': String(GIB) },
      body: Readable.toWeb(createReadStream(local, { highWaterMark: BLOCK })),
      duplex: 'half',
    } as RequestInit);
    expect({ status: put.status, size: ((await put.json()) as { size: number }).size }).toEqual({ status: 201, size: GIB });
    expect(await sha256Of(uploaded)).toBe(expected);

    // GET, hashed as it streams.
    const got = await fetch(contentUrl(uploaded), { headers: auth });
    expect(got.status).toBe(200);
    const hash = createHash('sha256');
    let received = 0;
    if (got.body === null) throw new Error('no body');
    for await (const chunk of got.body as unknown as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      received += chunk.byteLength;
    }
    expect({ received, sha256: hash.digest('hex') }).toEqual({ received: GIB, sha256: expected });

    // exec-rx cp, both ways.
    const remote = join(work, 'cp-up.bin');
    const up = await runCliBytes(['cp', local, `${ENV}:${remote}`], '', env);
    expect({ code: up.code, stderr: up.stderr }).toEqual({ code: 0, stderr: '' });
    expect(await sha256Of(remote)).toBe(expected);
    const down = join(work, 'cp-down.bin');
    const back = await runCliBytes(['cp', `${ENV}:${remote}`, down], '', env);
    expect({ code: back.code, stderr: back.stderr }).toEqual({ code: 0, stderr: '' });
    expect(await sha256Of(down)).toBe(expected);
    for (const path of [local, uploaded, remote, down]) rmSync(path);
  });

  it('copies a directory of 5,000 files up and down with exec-rx cp, entry by entry', async () => {
    const source = join(work, 'tree');
    for (let i = 0; i < TREE_FILES; i += 1) {
      const dir = join(source, `d${i % 10}`);
      if (i < 10) mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `f${i}.bin`), createHash('sha256').update(`file ${i}`).digest().toString('hex').repeat(i % 5))
    }
    const expected = tree(source);
    expect(Object.keys(expected)).toHaveLength(TREE_FILES);
    const remote = join(work, 'remote-tree');
    const up = await runCliBytes(['cp', source, `${ENV}:${remote}`], '', env);
    expect({ code: up.code, stderr: up.stderr }).toEqual({ code: 0, stderr: '' });
    expect(tree(remote)).toEqual(expected);
    const down = join(work, 'down-tree');
    const back = await runCliBytes(['cp', `${ENV}:${remote}`, down], '', env);
    expect({ code: back.code, stderr: back.stderr }).toEqual({ code: 0, stderr: '' });
    expect(tree(down)).toEqual(expected);
  });
});
