import { decodeCanonical } from './base64';
import { isNonNegativeInteger } from './integer';
import type { OutputEvent } from './process-event';

/**
 * The connection's decoder of `process/output` params (docs/performance.md): the {@link OutputEvent} they carry (the only
 * object made per frame), or `undefined` exactly where `processOutputOf` (`./process`) refuses them; when it
 * returns an event, `params.processId` is a string. `ascii`: the frame held ASCII only (see
 * `decodeCanonical`). The stream is the shared constant, not the parsed string.
 */
export function outputEventOf(params: unknown, ascii = false): OutputEvent | undefined {
  if (typeof params !== 'object' || params === null) return undefined;
  const { processId, seq, stream, chunk } = params as { readonly [key: string]: unknown };
  if (typeof processId !== 'string' || !isNonNegativeInteger(seq) || typeof chunk !== 'string') return undefined;
  const known = stream === 'stdout' ? 'stdout' : stream === 'stderr' ? 'stderr' : stream === 'pty' ? 'pty' : undefined;
  if (known === undefined) return undefined;
  const bytes = decodeCanonical(chunk, ascii);
  return bytes === undefined ? undefined : { type: 'output', seq, stream: known, chunk: bytes };
}

