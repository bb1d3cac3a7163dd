/**
 * How the operator API shows a live process (issue 38, found by the nemesis): one whose stream failed
 * because its executor lost it (restarted, session gone) is shown as its log store records it and its
 * readers see it, `lost` with PROCESS_GONE and why, also by a replica that still holds the failed generation
 * it ran in; one that failed for another reason is shown `failed`, with its own error.
 */
import { ProcessFailedError } from '../../../src/errors';
import { toResource } from '../../../src/host/api/process-resource';

const failed = {
  processId: 'p-1',
  argv: ['sh', '-c', 'sleep 300'],
  tty: false,
  state: 'failed' as const,
  exitCode: undefined,
  error: new ProcessFailedError('p-1', 'process p-1 failed: exec-server transport disconnected; failed to resume exec-server session: unknown session id s-1'),
};
const times = { startedAt: 1_000, exitedAt: null, startedBy: 'env' };

describe('toResource', () => {
  it('shows a failed process its log store says was lost as lost, with PROCESS_GONE and why', () => {
    const why = 'the executor no longer had its session (it restarted, or the session outlived its 80 s retention): the process was killed with it';
    expect(toResource('env-1', failed, false, { ...times, lostReason: why })).toMatchObject({ id: 'p-1', state: 'lost', exitCode: null, error: { code: 'PROCESS_GONE', message: why } });
  });

  it('shows one that failed otherwise as failed, with its own error', () => {
    for (const extras of [times, { ...times, lostReason: null }]) {
      expect(toResource('env-1', failed, false, extras)).toMatchObject({ state: 'failed', error: { code: 'PROCESS_FAILED', message: failed.error.message } });
    }
  });

  it('never changes a process that did not fail', () => {
    const closed = { ...failed, state: 'closed' as const, exitCode: 0, error: undefined };
    expect(toResource('env-1', closed, false, { ...times, lostReason: 'stale' })).toMatchObject({ state: 'closed', exitCode: 0, error: null });
  });
});
