/**
 * The operator API's keyed starts as the data dir keeps them (`starts/<digest>.json`): each record is on
 * the disk when `record` resolves, and a new open reads it back with its state; the key itself is never
 * stored (the file is named by a digest); past the bound the oldest go; a damaged file is dropped.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualTimeScheduler } from 'rxjs';
import { startDigestOf } from '../../../src/host/api/keyed-starts';
import { STARTS_DIR, StartRecords } from '../../../src/store/disk/start-records';

describe('StartRecords', () => {
  let dir: string;
  let clock: VirtualTimeScheduler;
  const open = (maxRecords?: number): Promise<StartRecords> => StartRecords.open(dir, { scheduler: clock, ...(maxRecords === undefined ? {} : { maxRecords }) });
  const start = (key: string, processId = `process-${key}`) => ({ digest: startDigestOf('token-1', 'env-1', key), environmentId: 'env-1', processId, fingerprint: `fingerprint-${key}` });
  /** Lets the virtual clock move on by `ms`. */
  const advance = (ms: number): void => {
    clock.schedule(() => undefined, ms);
    clock.flush();
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-start-records-'));
    clock = new VirtualTimeScheduler();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('has the record on the disk when record() resolves, and a new open reads it back, then marked started', async () => {
    const records = await open();
    const first = start('key-1');
    await records.record(first);
    const file = join(dir, STARTS_DIR, `${first.digest}.json`);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ version: 1, environmentId: 'env-1', processId: 'process-key-1', fingerprint: 'fingerprint-key-1', state: 'sent', recordedAt: 0 });
    expect((await open()).get(first.digest)).toEqual({ ...first, state: 'sent', recordedAt: 0 });

    await records.markStarted(first.digest);
    expect((await open()).get(first.digest)).toEqual({ ...first, state: 'started', recordedAt: 0 });
  });

  it('never stores the Idempotency-Key: the file is named by a sha256 digest of token, environment and key', async () => {
    const records = await open();
    const key = 'a-secret-looking-idempotency-key';
    await records.record({ ...start(key, 'process-1'), fingerprint: 'fingerprint-1' });
    const names = readdirSync(join(dir, STARTS_DIR));
    expect(names).toEqual([`${startDigestOf('token-1', 'env-1', key)}.json`]);
    expect(names[0]).toMatch(/^[0-9a-f]{64}\.json$/);
    expect(readFileSync(join(dir, STARTS_DIR, names[0] ?? ''), 'utf8')).not.toContain(key);
    // Scoped: another token or environment with the same key is another record.
    expect(new Set([startDigestOf('token-1', 'env-1', key), startDigestOf('token-2', 'env-1', key), startDigestOf('token-1', 'env-2', key)]).size).toBe(3);
  });

  it('keeps at most maxRecords, the oldest going first, on the disk and after a reopen', async () => {
    const records = await open(2);
    for (const key of ['a', 'b', 'c']) {
      await records.record(start(key));
      advance(10);
    }
    expect({ size: records.size, a: records.get(start('a').digest), files: readdirSync(join(dir, STARTS_DIR)).sort() }).toEqual({
      size: 2,
      a: undefined,
      files: [`${start('b').digest}.json`, `${start('c').digest}.json`].sort(),
    });
    // A reopen with a smaller bound drops the oldest by recordedAt.
    const reopened = await open(1);
    expect({ b: reopened.get(start('b').digest), c: reopened.get(start('c').digest)?.processId }).toEqual({ b: undefined, c: 'process-c' });
    expect(existsSync(join(dir, STARTS_DIR, `${start('b').digest}.json`))).toBe(false);
  });

  it('forgets a failed start (its file removed), and drops a damaged or foreign file at open', async () => {
    const records = await open();
    await records.record(start('failed'));
    await records.forget(start('failed').digest);
    expect({ kept: records.get(start('failed').digest), files: readdirSync(join(dir, STARTS_DIR)) }).toEqual({ kept: undefined, files: [] });

    const damaged = join(dir, STARTS_DIR, `${start('damaged').digest}.json`);
    writeFileSync(damaged, '{"environmentId":');
    writeFileSync(join(dir, STARTS_DIR, 'not-a-digest.json'), '{}');
    const reopened = await open();
    expect({ size: reopened.size, files: readdirSync(join(dir, STARTS_DIR)) }).toEqual({ size: 0, files: [] });
  });
});
