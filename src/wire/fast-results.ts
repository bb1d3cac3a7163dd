import type { EnvironmentStatusResponse } from './environment';
import type { ExecResponse, TerminateResponse, WriteResponse } from './process';

/**
 * Hand-written decoders of the most frequent results, for values `JSON.parse` made: each returns what its
 * io-ts codec decodes, or `undefined` exactly where the codec refuses (unknown keys dropped as `t.exact`
 * drops them). They only spare the codec's generic machinery; a property spec holds each equal to its
 * codec. The method table uses them first and the codec for anything they refuse (to name the error).
 */

/** What io-ts' UnknownRecord accepts, for JSON values: an object that is not an array. */
const isRecord = (u: unknown): u is { readonly [key: string]: unknown } => typeof u === 'object' && u !== null && !Array.isArray(u);

/** `environment/status` result (`EnvironmentStatusResponse`). */
export function environmentStatusOf(u: unknown): EnvironmentStatusResponse | undefined {
  return isRecord(u) && u.status === 'ready' ? { status: 'ready' } : undefined;
}

/** `process/write` result (`WriteResponse`). */
export function writeResponseOf(u: unknown): WriteResponse | undefined {
  if (!isRecord(u)) return undefined;
  const status = u.status;
  return status === 'accepted' || status === 'unknownProcess' || status === 'stdinClosed' || status === 'starting' ? { status } : undefined;
}

/** `process/terminate` result (`TerminateResponse`). */
export function terminateResponseOf(u: unknown): TerminateResponse | undefined {
  return isRecord(u) && typeof u.running === 'boolean' ? { running: u.running } : undefined;
}

/** `process/start` result (`ExecResponse`): `sandboxType` kept when present. */
export function execResponseOf(u: unknown): ExecResponse | undefined {
  if (!isRecord(u) || typeof u.processId !== 'string') return undefined;
  const sandboxType = u.sandboxType;
  if (sandboxType === undefined) return { processId: u.processId };
  return typeof sandboxType === 'string' ? { processId: u.processId, sandboxType } : undefined;
}
