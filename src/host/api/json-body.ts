/**
 * Reading a request's JSON body: bounded in size, `application/json` only, decoded with a codec. Each
 * failure is an ApiProblem with its own code; nothing is acted on before the whole body decoded.
 */
import type { IncomingMessage } from 'node:http';
import * as t from 'io-ts';
import * as E from 'fp-ts/lib/Either';
import { parseJson } from '../../wire/decode';
import { ApiProblem } from './problem';

/**
 * How much of a refused body the host still reads and discards, as nginx's lingering close does: a client
 * that writes its whole body before it reads the answer (Node's fetch, most HTTP libraries) would
 * otherwise see its connection reset under its write (EPIPE) and never read the 413. Up to this many bytes
 * past the refusal the connection is kept and the rest of the body drained; a body declared longer, or one
 * that goes on past it, gets `Connection: close` and the socket is closed.
 */
export const LINGER_BYTES = 64 * 1024 * 1024;

/**
 * The 413 `BODY_TOO_LARGE` for a body over `limit` (`detail` says which limit), and what the connection
 * does with the rest of it: when the body is declared no longer than `read + LINGER_BYTES`, or not declared,
 * the rest is read and discarded (the answer goes out at once; the client finishes writing, then reads it)
 * and the socket is destroyed only if it goes on past the bound; when it is declared longer, the answer
 * says `Connection: close` and nothing more is read. `read` is what was already taken of it.
 */
export function bodyTooLarge(req: IncomingMessage, detail: string, read = 0): ApiProblem {
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared - read > LINGER_BYTES) return new ApiProblem(413, 'BODY_TOO_LARGE', detail, { connection: 'close' });
  let drained = 0;
  const drain = (chunk: Buffer): void => {
    drained += chunk.byteLength;
    if (drained > LINGER_BYTES) {
      req.off('data', drain);
      req.socket.destroy();
    }
  };
  req.on('data', drain);
  req.resume();
  return new ApiProblem(413, 'BODY_TOO_LARGE', detail);
}

/** Reads the body, at most `limit` bytes; rejects with 413 beyond (the rest drained: {@link bodyTooLarge}). */
function readLimited(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const detail = `the body may be at most ${limit} bytes`;
    const declared = Number(req.headers['content-length'] ?? '0');
    if (Number.isFinite(declared) && declared > limit) {
      reject(bodyTooLarge(req, detail));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength;
      if (size > limit) {
        req.off('data', onData);
        chunks.length = 0;
        reject(bodyTooLarge(req, detail, size));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** Whether the keys below `type` index its members (an intersection's or a union's), not the value's fields. */
function indexesMembers(type: t.Decoder<unknown, unknown>): boolean {
  const inner = type instanceof t.ExactType ? (type.type as unknown) : type;
  return inner instanceof t.IntersectionType || inner instanceof t.UnionType;
}

/**
 * Where the body failed `codec`: `path: expected Type`, one per failing path. Never the values sent: a
 * body carries a process's env, its argv and its stdin, and none of it belongs in an error.
 */
export function describeDecodeErrors(errors: t.Errors): string {
  const lines = new Set<string>();
  for (const error of errors) {
    const keys: string[] = [];
    let expected = error.context[0]?.type.name ?? 'a value';
    error.context.forEach((entry, index) => {
      const parent = error.context[index - 1]?.type;
      if (parent === undefined || indexesMembers(parent)) return;
      keys.push(entry.key);
      expected = entry.type.name;
    });
    lines.add(`${keys.length === 0 ? 'the body' : keys.join('.')}: expected ${expected}`);
  }
  return [...lines].join('; ');
}

/** The JSON object (not an array) `value` is, if it is one. */
const objectOf = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Readonly<Record<string, unknown>>) : undefined;

/**
 * The paths of the fields `sent` has and `decoded` does not: the codecs drop unknown keys (`t.exact`), so
 * comparing the two finds what the codec did not know, however deep. A record (`env`) keeps every key.
 */
function unknownFields(sent: unknown, decoded: unknown, prefix = ''): string[] {
  const given = objectOf(sent);
  const kept = objectOf(decoded);
  if (given === undefined || kept === undefined) return [];
  return Object.keys(given).flatMap((key) => (Object.prototype.hasOwnProperty.call(kept, key) ? unknownFields(given[key], kept[key], `${prefix}${key}.`) : [`${prefix}${key}`]));
}

/** At most this many unknown fields are named, each cut to 64 characters. */
const NAMED_UNKNOWN = 5;

/**
 * The body decoded by `codec`. Rejects with ApiProblem 415 (`UNSUPPORTED_MEDIA_TYPE`) unless it is
 * `application/json`, 413 (`BODY_TOO_LARGE`), 400 `MALFORMED_JSON` when it does not parse, 400
 * `INVALID_REQUEST` naming the failing paths (never the values) when it does not match `codec`, or naming
 * the fields it has that `codec` does not know (a misspelt optional field is refused, not ignored).
 */
export async function readJsonBody<A>(req: IncomingMessage, codec: t.Type<A, unknown, unknown>, limit: number): Promise<A> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw new ApiProblem(415, 'UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json');
  const body = await readLimited(req, limit);
  const parsed = parseJson(body.toString('utf8'));
  if (E.isLeft(parsed)) throw new ApiProblem(400, 'MALFORMED_JSON', 'the body is not valid JSON');
  const decoded = codec.decode(parsed.right);
  if (E.isLeft(decoded)) throw new ApiProblem(400, 'INVALID_REQUEST', describeDecodeErrors(decoded.left).slice(0, 2000));
  const unknown = unknownFields(parsed.right, decoded.right);
  if (unknown.length > 0) {
    const named = unknown.slice(0, NAMED_UNKNOWN).map((path) => path.slice(0, 64));
    const more = unknown.length > NAMED_UNKNOWN ? ` and ${unknown.length - NAMED_UNKNOWN} more` : '';
    throw new ApiProblem(400, 'INVALID_REQUEST', `unknown field${unknown.length === 1 ? '' : 's'}: ${named.join(', ')}${more}`);
  }
  return decoded.right;
}

/** Drains a body the route does not take (so keep-alive stays usable); rejects 413 beyond `limit`. */
export async function discardBody(req: IncomingMessage, limit: number): Promise<void> {
  await readLimited(req, limit);
}
