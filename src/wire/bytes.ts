/** Bytes we are given: raw bytes, or text sent as UTF-8. */
export type BytesInput = Uint8Array | string;

/** `data` as bytes: a string becomes its UTF-8 encoding; bytes are used as they are (no copy). */
export const toBytes = (data: BytesInput): Uint8Array => (typeof data === 'string' ? Buffer.from(data, 'utf8') : data);

/** `bytes` as a Buffer over the same memory (no copy; decoded base64 is already a Buffer). */
export const toBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
