/**
 * The `Range` and `If-Range` request headers of a download (RFC 9110 §14), for one range only.
 * A header that does not parse, names another unit or asks for several ranges is ignored (§14.2: the
 * server answers the whole file, 200); a range that parses but lies past the end is unsatisfiable (416).
 */

/** What a request's Range asks of a file of a known size. */
export type RangeAsk =
  /** No usable Range: the whole file, 200. */
  | { readonly kind: 'whole' }
  /** Bytes `start` to `end` (exclusive), 206. */
  | { readonly kind: 'part'; readonly start: number; readonly end: number }
  /** Nothing of the file can be given, 416 with `Content-Range: bytes *\/size`. */
  | { readonly kind: 'unsatisfiable' };

const SINGLE = /^bytes[ \t]*=[ \t]*(\d*)[ \t]*-[ \t]*(\d*)[ \t]*$/i;

/** The range `header` asks of a file of `size` bytes (see the module's doc). */
export function rangeOf(header: string | undefined, size: number): RangeAsk {
  if (header === undefined) return { kind: 'whole' };
  const match = SINGLE.exec(header);
  if (match === null) return { kind: 'whole' };
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return { kind: 'whole' };
  if (first === '') {
    // A suffix: the last N bytes.
    const length = Number(last);
    if (!Number.isSafeInteger(length)) return { kind: 'whole' };
    if (length === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', start: Math.max(0, size - length), end: size };
  }
  const start = Number(first);
  const end = last === '' ? Number.MAX_SAFE_INTEGER : Number(last);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'part', start, end: Math.min(end, size - 1) + 1 };
}

/**
 * Whether an `If-Range` lets the Range apply (RFC 9110 §13.1.5): absent, yes; an HTTP date, only when it is
 * exactly the file's `Last-Modified` (to the second); an entity tag, never (it needs a strong comparison,
 * and this host's tags are weak): then the whole file is sent.
 */
export function ifRangeHolds(header: string | undefined, lastModified: string | undefined): boolean {
  if (header === undefined) return true;
  const value = header.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return false;
  if (lastModified === undefined) return false;
  const asked = Date.parse(value);
  return Number.isFinite(asked) && asked === Date.parse(lastModified);
}

/** Whether an `If-None-Match` names `etag` (weak comparison, RFC 9110 §13.1.2) or is `*`. */
export function noneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const strip = (tag: string): string => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || strip(tag) === strip(etag));
}
