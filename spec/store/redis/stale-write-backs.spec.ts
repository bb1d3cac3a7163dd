/**
 * Issue 38 (found by the nemesis, seed 4): after Redis lost its data, a replica that no longer owned an
 * environment wrote it back first, its processes `running` at its old epoch; the owner's write-back took the
 * environment back, and those processes were left running for ever in no session. The owner marks each one
 * `lost` saying why, and leaves alone its own processes, ended ones, and those of environments it does not own.
 */
import type { ProcessKey, ProcessMeta } from '../../../src/store/process-meta';
import { startingMeta } from '../../../src/store/process-meta';
import { loseStaleWriteBacks } from '../../../src/store/redis/stale-write-backs';

const meta = (environmentId: string, processId: string, state: ProcessMeta['state']): ProcessMeta => ({
  ...startingMeta({ environmentId, processId }, { argv: ['sh'], tty: false }, 0),
  state,
});

describe('loseStaleWriteBacks', () => {
  it("marks lost what another writer put back as running in the owner's environments, and nothing else", async () => {
    const listed: Record<string, readonly ProcessMeta[]> = {
      'env-1': [meta('env-1', 'stale-running', 'running'), meta('env-1', 'stale-exited', 'exited'), meta('env-1', 'own', 'running'), meta('env-1', 'for-a-take-back', 'unknown')],
      'env-2': [meta('env-2', 'not-owned', 'running')],
    };
    const lost: string[] = [];
    const parts = {
      adoptable: (id: string): Promise<readonly ProcessMeta[]> => Promise.resolve(listed[id] ?? []),
      writes: (key: ProcessKey): boolean => key.processId === 'own',
      markLost: (key: ProcessKey, reason: string, epoch: number): Promise<void> => {
        lost.push(`${key.environmentId}/${key.processId} at ${epoch}: ${reason}`);
        return Promise.resolve();
      },
    };
    expect(await loseStaleWriteBacks(parts, new Map([['env-1', 7]]))).toBe(2);
    const why = "after Redis lost its data, a replica that no longer owned environment env-1 wrote it back as running; it is not in the session of the environment's owner (epoch 7)";
    expect(lost).toEqual([`env-1/stale-running at 7: ${why}`, `env-1/stale-exited at 7: ${why}`]);
  });

  it("rejects with the store's error (the next round writes everything back again)", async () => {
    const parts = { adoptable: (): Promise<readonly ProcessMeta[]> => Promise.reject(new Error('ECONNRESET')), writes: (): boolean => false, markLost: (): Promise<void> => Promise.resolve() };
    await expect(loseStaleWriteBacks(parts, new Map([['env-1', 7]]))).rejects.toThrow('ECONNRESET');
  });
});
