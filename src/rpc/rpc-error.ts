import { NotFoundError, RpcError, SpawnError } from '../errors';
import { ErrorCodes } from '../wire/jsonrpc';
import type { JsonRpcErrorObject } from '../wire/jsonrpc';

/** Maps a JSON-RPC error object to the most specific typed error (NotFoundError, SpawnError, RpcError). */
export function toRpcError(method: string, error: JsonRpcErrorObject): RpcError {
  if (error.code === ErrorCodes.NotFound) return new NotFoundError(method, error.code, error.message, error.data);
  const kind = spawnKind(error.data);
  if (error.code === ErrorCodes.InternalError && kind !== undefined) return new SpawnError(method, error.code, error.message, kind, error.data);
  return new RpcError(method, error.code, error.message, error.data);
}

const spawnKind = (data: unknown): string | undefined => {
  if (typeof data !== 'object' || data === null || !('kind' in data)) return undefined;
  return typeof data.kind === 'string' ? data.kind : undefined;
};
