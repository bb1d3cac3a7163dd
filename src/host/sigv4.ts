/**
 * Server-side AWS Signature Version 4 verification for the direct transport
 * (docs/protocol.md#sigv4-signing): the executor signs its registration POST
 * (`content-type;host;x-amz-date`, body hashed) and its WebSocket upgrade (`host;x-amz-date`, empty
 * body). The canonical request is rebuilt with `aws4` from exactly the headers the client says it signed,
 * and the signatures are compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { RequestSigner } from 'aws4';
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';

/** Accepted access key ids and their secret access keys. Never logged; never in an error. */
export type AccessKeyStore = ReadonlyMap<string, string>;

/** What a request looks like to the verifier. `path` is the raw request target (path and query). */
export interface SignedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer | string;
}

/** Scope and freshness rules. */
export interface SigV4Policy {
  readonly keys: AccessKeyStore;
  /** The signing region the executor uses (`--aws-region`). */
  readonly region: string;
  /** The signing service (`--aws-service`). */
  readonly service: string;
  /** How far `x-amz-date` may be from now, either way. */
  readonly maxClockSkewMs: number;
  /** Headers that must be among the signed ones (besides `host` and `x-amz-date`). */
  readonly requiredSignedHeaders?: readonly string[];
  /** The clock `x-amz-date` is held against (`now()`). @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
}

/** Why a request was refused; safe to log (it names no secret, no signature, no key id). */
export type SigV4Failure = 'missing' | 'malformed' | 'scope' | 'stale' | 'unknown-key' | 'mismatch';

/** The outcome: a verified request names the access key id that signed it and when (its `x-amz-date`, epoch ms); a refused one says why. */
export type SigV4Result = { readonly ok: true; readonly accessKeyId: string; readonly signedAt: number } | { readonly ok: false; readonly reason: SigV4Failure };

/** The parts of an `Authorization: AWS4-HMAC-SHA256 ...` header. */
interface ParsedAuthorization {
  readonly accessKeyId: string;
  readonly date: string;
  readonly region: string;
  readonly service: string;
  readonly signedHeaders: readonly string[];
  readonly signature: string;
}

const AUTH_PREFIX = 'AWS4-HMAC-SHA256 ';
const CREDENTIAL = /^([^/\s]+)\/(\d{8})\/([^/\s]+)\/([^/\s]+)\/aws4_request$/;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
const SIGNATURE = /^[0-9a-f]{64}$/;
const HEADER_NAME = /^[a-z0-9-]+$/;

/** Parses the Authorization header; `undefined` when it is not a well-formed SigV4 header. */
export function parseAuthorization(header: string): ParsedAuthorization | undefined {
  if (!header.startsWith(AUTH_PREFIX)) return undefined;
  const fields = new Map<string, string>();
  for (const part of header.slice(AUTH_PREFIX.length).split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const credential = CREDENTIAL.exec(fields.get('Credential') ?? '');
  const signedHeaders = (fields.get('SignedHeaders') ?? '').split(';');
  const signature = fields.get('Signature') ?? '';
  if (credential === null || !SIGNATURE.test(signature) || !signedHeaders.every((h) => HEADER_NAME.test(h))) return undefined;
  const [, accessKeyId = '', date = '', region = '', service = ''] = credential;
  return { accessKeyId, date, region, service, signedHeaders, signature };
}

/** `YYYYMMDDTHHMMSSZ` as epoch milliseconds, or `undefined`. */
export function parseAmzDate(value: string): number | undefined {
  const m = AMZ_DATE.exec(value);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number);
  const ms = Date.UTC(y ?? 0, (mo ?? 1) - 1, d ?? 0, h ?? 0, mi ?? 0, s ?? 0);
  return Number.isNaN(ms) ? undefined : ms;
}

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? undefined : value);

/** Checks scope, freshness and the signed-header set before any cryptography. */
function checkShape(request: SignedRequest, auth: ParsedAuthorization, policy: SigV4Policy): SigV4Failure | undefined {
  const required = ['host', 'x-amz-date', ...(policy.requiredSignedHeaders ?? [])];
  if (!required.every((name) => auth.signedHeaders.includes(name))) return 'malformed';
  if (!auth.signedHeaders.every((name) => single(request.headers[name]) !== undefined)) return 'malformed';
  if (auth.region !== policy.region || auth.service !== policy.service) return 'scope';
  const amzDate = single(request.headers['x-amz-date']) ?? '';
  const signedAt = parseAmzDate(amzDate);
  if (signedAt === undefined || !amzDate.startsWith(auth.date)) return 'malformed';
  const now = (policy.scheduler ?? asyncScheduler).now();
  if (Math.abs(now - signedAt) > policy.maxClockSkewMs) return 'stale';
  return undefined;
}

/** The signature `aws4` computes for this request and secret, from the headers the client signed. */
function expectedSignature(request: SignedRequest, auth: ParsedAuthorization, secretAccessKey: string): string {
  const headers: Record<string, string> = {};
  const include: Record<string, boolean> = {};
  for (const name of auth.signedHeaders) {
    headers[name] = single(request.headers[name]) ?? '';
    include[name] = true;
  }
  const signer = new RequestSigner(
    // extraHeadersToInclude: sign exactly what the client signed, even headers aws4 skips by default.
    Object.assign(
      { method: request.method, path: request.path, host: headers['host'] ?? '', headers, body: request.body },
      { service: auth.service, region: auth.region, doNotModifyHeaders: true, extraHeadersToInclude: include },
    ),
    { accessKeyId: auth.accessKeyId, secretAccessKey },
  );
  // With doNotModifyHeaders aws4 would take the date from the clock; it must be the signed x-amz-date.
  signer.datetime = headers['x-amz-date'] ?? '';
  return signer.signature();
}

/** {@link expectedSignature}, or `undefined` when aws4 cannot canonicalise the path (bad percent-encoding). */
function safeExpectedSignature(request: SignedRequest, auth: ParsedAuthorization, secretAccessKey: string): string | undefined {
  try {
    return expectedSignature(request, auth, secretAccessKey);
  } catch {
    return undefined;
  }
}

/** Constant-time equality of two strings (hashed first, so lengths leak nothing either). */
export function constantTimeEqual(a: string, b: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Verifies a SigV4-signed request against the accepted keys: the header must parse, name the configured
 * region and service, sign `host` and `x-amz-date` (plus `requiredSignedHeaders`), carry an `x-amz-date`
 * within `maxClockSkewMs` of now, and its signature must match the one recomputed with the key's secret.
 * Never throws; the failure reason names no secret.
 */
export function verifySigV4(request: SignedRequest, policy: SigV4Policy): SigV4Result {
  const header = single(request.headers.authorization);
  if (header === undefined) return { ok: false, reason: 'missing' };
  const auth = parseAuthorization(header);
  if (auth === undefined) return { ok: false, reason: 'malformed' };
  const shape = checkShape(request, auth, policy);
  if (shape !== undefined) return { ok: false, reason: shape };
  const secret = policy.keys.get(auth.accessKeyId);
  // An unknown key still costs one signature computation, so timing does not tell known keys apart.
  const expected = safeExpectedSignature(request, auth, secret ?? 'exec-rx-unknown-key');
  if (expected === undefined) return { ok: false, reason: 'malformed' };
  const matches = constantTimeEqual(expected, auth.signature);
  if (secret === undefined) return { ok: false, reason: 'unknown-key' };
  // checkShape parsed it already: a request that got here carries a valid x-amz-date.
  const signedAt = parseAmzDate(single(request.headers['x-amz-date']) ?? '') ?? 0;
  return matches ? { ok: true, accessKeyId: auth.accessKeyId, signedAt } : { ok: false, reason: 'mismatch' };
}
