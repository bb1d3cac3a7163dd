// Limits of the codex 0.171.0 executor (docs/protocol.md#limits), and the sizes we derive from them.

/**
 * The largest message the executor accepts from us: 16 MiB (16 777 216 bytes) of frame text. A larger
 * one makes it drop the connection without a JSON-RPC error, so never send one.
 */
export const MAX_INBOUND_FRAME_BYTES = 16 * 1024 * 1024;

/**
 * Raw bytes per `process/write` message when we split a large stdin payload: 4 MiB, which base64
 * (4/3) turns into about 5.6 MiB of frame, well below {@link MAX_INBOUND_FRAME_BYTES}. `fs/writeBlock`
 * must stay within {@link WRITE_BLOCK_MAX_BYTES} instead.
 */
export const SAFE_CHUNK_BYTES = 4 * 1024 * 1024;

/** The largest `len` `fs/readBlock` accepts (1 MiB); the smallest is 1. */
export const READ_BLOCK_MAX_BYTES = 1_048_576;

/** The largest block `fs/writeBlock` accepts per call, per codex's source (1 MiB). */
export const WRITE_BLOCK_MAX_BYTES = 1_048_576;

/** The largest chunk one `process/output` notification carries: 8192 bytes (about 11 KB of frame). */
export const OUTPUT_CHUNK_MAX_BYTES = 8192;

/**
 * Output the executor retains per process for `process/read`: the most recent ≈1 MiB (and at most
 * {@link EXECUTOR_OUTPUT_WINDOW_CHUNKS} chunks); older chunks are evicted without a marker.
 */
export const EXECUTOR_OUTPUT_WINDOW_BYTES = 1_048_576;

/** The most output chunks the executor retains per process (from codex's source). */
export const EXECUTOR_OUTPUT_WINDOW_CHUNKS = 50_000;
