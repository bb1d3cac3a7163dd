import { NotFoundError, RpcError } from '../../../../src/errors';
import { fileProblemOf } from '../../../../src/host/api/files/file-errors';

describe('fileProblemOf', () => {
  it.each([
    [new NotFoundError('fs/getMetadata', -32004, 'No such file or directory (os error 2)'), 404, 'FILE_NOT_FOUND'],
    [new RpcError('fs/open', -32600, 'path `/x` is not a file'), 409, 'IS_A_DIRECTORY'],
    [new RpcError('fs/open', -32603, 'Is a directory (os error 21)'), 409, 'IS_A_DIRECTORY'],
    [new RpcError('fs/readDirectory', -32603, 'Not a directory (os error 20)'), 409, 'NOT_A_DIRECTORY'],
    [new RpcError('fs/remove', -32603, 'Directory not empty (os error 39)'), 409, 'DIRECTORY_NOT_EMPTY'],
    [new RpcError('fs/createDirectory', -32603, 'File exists (os error 17)'), 409, 'FILE_EXISTS'],
    [new RpcError('fs/writeFile', -32600, 'Permission denied (os error 13)'), 403, 'FILE_FORBIDDEN'],
    [new RpcError('fs/writeFile', -32603, 'Read-only file system (os error 30)'), 403, 'FILE_FORBIDDEN'],
    [new RpcError('fs/writeBlock', -32603, 'No space left on device (os error 28)'), 507, 'INSUFFICIENT_STORAGE'],
    [new RpcError('fs/getMetadata', -32603, 'Filename too long (os error 36)'), 400, 'INVALID_PATH'],
    [new RpcError('fs/getMetadata', -32603, 'Symbolic link loop (os error 40)'), 400, 'INVALID_PATH'],
    [new RpcError('fs/getMetadata', -32602, "'file:///a%00b' is invalid on 'linux'"), 400, 'INVALID_PATH'],
    [new RpcError('fs/copy', -32603, 'something else'), 502, 'RPC_ERROR'],
  ])('maps %s', (error, status, code) => {
    const problem = fileProblemOf(error, '/x');
    expect({ status: problem.status, code: problem.code }).toEqual({ status, code });
  });

  it('says a read-only file system (EROFS) is read-only, not a permission the executor lacks', () => {
    const problem = fileProblemOf(new RpcError('fs/open', -32603, 'Read-only file system (os error 30)'), '/ro/x');
    expect({ status: problem.status, code: problem.code, detail: problem.detail }).toEqual({
      status: 403,
      code: 'FILE_FORBIDDEN',
      detail: '/ro/x: the file system there is read-only (Read-only file system (os error 30))',
    });
  });
});
