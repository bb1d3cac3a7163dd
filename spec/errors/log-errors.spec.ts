/**
 * An output log's failure names what it was doing in words (an operator reads it in the host's log and
 * in a reader's `failed` event), the process and the errno, and never a path.
 */
import type { LogWriteOperation } from '../../src/errors';
import { OutputLogError } from '../../src/errors';

describe('OutputLogError', () => {
  it.each<[LogWriteOperation, string]>([
    ['open', 'output log of process p-1 failed to make its files: ENOSPC'],
    ['write', 'output log of process p-1 failed to write: ENOSPC'],
    ['sync', 'output log of process p-1 failed to sync to the disk: ENOSPC'],
    ['manifest', 'output log of process p-1 failed to record what its quota dropped: ENOSPC'],
    ['metadata', "output log of process p-1 failed to write the process's metadata: ENOSPC"],
    ['remove', 'output log of process p-1 failed to remove its files: ENOSPC'],
  ])('says what it failed to do in words (%s)', (operation, message) => {
    const error = new OutputLogError('p-1', 'ENOSPC', operation);
    expect(error.message).toBe(message);
    expect(error).toMatchObject({ code: 'LOG_WRITE_FAILED', processId: 'p-1', errno: 'ENOSPC', operation });
  });
});
