/**
 * Keyed starts (`Idempotency-Key`) when a start fails (issue 38): a start that certainly made no process
 * (the executor refused it, the host refused it before sending) forgets its key, so the same key starts
 * anew; any other failed start may have begun (its answer lost with the socket, timed out, its environment
 * gone meanwhile), so its record stays and a retry is answered from it, never with a second process.
 */
import { ClosedError, RequestTimeoutError, RpcError, TransportClosedError } from '../../../src/errors';
import { ApiProblem } from '../../../src/host/api/problem';
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
  it.each([
    ['the executor refused it', new RpcError('process/start', -32603, 'spawn refused')],
    ['the host refused it before sending', new ApiProblem(422, 'SPAWN_FAILED', 'cannot start in /nowhere')],
  ])('forgets the key of a start that certainly made no process (%s): the same key starts anew', async (_why, refusal) => {
    const state = new MemoryStateStore();
    await state.claim('env-1', 'host-1');
    const log: string[] = [];
    const starts = new KeyedStarts<string>(state, () => 1);
    await expect(starts.start('env-1', REQUEST, KEY, steps(state, refusal, log))).rejects.toBe(refusal);
    await expect(starts.start('env-1', REQUEST, KEY, steps(state, undefined, log))).resolves.toBe('p-1');
    expect(log).toEqual(['fresh p-1', 'fresh p-1']);
  });

  it.each([
    ['its answer the connection lost', new TransportClosedError('remote', 1006, 'the socket went')],
    ['it timed out (a replica paused meanwhile)', new RequestTimeoutError('process/start', 30_000)],
    ['its environment was let go meanwhile', new ClosedError('environment env-1 was let go')],
    ['anything else', new Error('unexpected')],
  ])('keeps the record of a start that may have begun (%s): its retry is answered from it, no second process', async (_why, doubt) => {
    const state = new MemoryStateStore();
    await state.claim('env-1', 'host-1');
    const log: string[] = [];
    const starts = new KeyedStarts<string>(state, () => 1);
    await expect(starts.start('env-1', REQUEST, KEY, steps(state, doubt, log))).rejects.toBe(doubt);
    await expect(starts.start('env-1', REQUEST, KEY, steps(state, undefined, log))).resolves.toBe('answered from p-1');
    expect(log).toEqual(['fresh p-1', 'recorded p-1 sent']);
  });
});
