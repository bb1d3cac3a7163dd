/**
 * The limits of the host's event streams (`./sse`): the send buffer of one subscriber, the streams a
 * token and the host may hold open, and the interval of the comment ping; and their defaults.
 */

/** Limits of the host's event streams. */
export interface SseLimits {
  /** Bytes a subscriber may have waiting to be sent; past it its stream ends (it resumes by seq). */
  readonly bufferBytes: number;
  /** Streams one operator token may hold open; beyond, 429. */
  readonly perToken: number;
  /** Streams open in all; beyond, 503. */
  readonly total: number;
  /** Interval of the `: ping` comment. */
  readonly pingMs: number;
}

/** Default {@link SseLimits}: 1 MiB, 256 per token, 1024 in all, a ping every 15 s. */
export const DEFAULT_SSE_LIMITS: SseLimits = { bufferBytes: 1024 * 1024, perToken: 256, total: 1024, pingMs: 15_000 };
