/**
 * Keyed starts (`Idempotency-Key`) when a start fails (issue 38): a start that failed forgets its key, so
 * the same key starts anew; a start whose answer the connection lost may have begun, so its record stays
 * and a retry is answered from it, never with a second process.
 */
import { TransportClosedError } from '../../../src/errors';
import { KeyedStarts } from '../../../src/host/api/keyed-starts';
import type { KeyedStartSteps } from '../../../src/host/api/keyed-starts';
import { MemoryStateStore } from '../../../src/store/memory/memory-state-store';

const REQUEST = { argv: ['echo', 'once'] };
const KEY = { tokenId: 'token-1', key: 'key-1' };

/** Steps whose fresh start records itself as the host does, then fails with `failure` (or makes `p-N`). */
function steps(state: MemoryStateStore, failure: Error | undefined, log: string[]): KeyedStartSteps<string> {
  let made = 0;
  return {
    fresh: async (recorded) => {
      made += 1;
      const processId = `p-${made}`;
      await state.recordStart({ digest: recorded.digest, environmentId: 'env-1', processId, fingerprint: recorded.fingerprint }, 1);
      log.push(`fresh ${processId}`);
      if (failure !== undefined) throw failure;
      return processId;
    },
    recorded: (processId, recordState) => {
      log.push(`recorded ${processId} ${recordState}`);
      return Promise.resolve(`answered from ${processId}`);
    },
    replay: (first) => first,
  };
}

describe('KeyedStarts when a start fails', () => {
  it('forgets the key of a start that failed: the same key starts anew', async () => {
    const state = new MemoryStateStore();
    await state.claim('env-1', 'host-1');
    const log: string[] = [];
    const starts = new KeyedStarts<string>(state, () => 1);
    await expect(starts.start('env-1', REQUEST, KEY, steps(state, new Error('spawn refused'), log))).rejects.toThrow('spawn refused');
    await expect(starts.start('env-1', REQUEST, KEY, steps(state, undefined, log))).resolves.toBe('p-1');
    expect(log).toEqual(['fresh p-1', 'fresh p-1']);
  });

  it('keeps the record of a start whose answer the connection lost: its retry is answered from it, no second process', async () => {
    const state = new MemoryStateStore();
    await state.claim('env-1', 'host-1');
    const log: string[] = [];
    const starts = new KeyedStarts<string>(state, () => 1);
    const lost = new TransportClosedError('remote', 1006, 'the socket went');
    await expect(starts.start('env-1', REQUEST, KEY, steps(state, lost, log))).rejects.toBe(lost);
    await expect(starts.start('env-1', REQUEST, KEY, steps(state, undefined, log))).resolves.toBe('answered from p-1');
    expect(log).toEqual(['fresh p-1', 'recorded p-1 sent']);
  });
});
