/**
 * Base64 for the client, with what every browser and Node 20 have (`atob`/`btoa`): the client must not
 * need Node's Buffer.
 */

/**
 * The bytes standard padded base64 `text` encodes (what the host sends); `undefined` when it is anything
 * else. `atob` alone is forgiving: it also takes whitespace and missing padding, so the length is checked
 * against the padding as well.
 */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0) return undefined;
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return undefined;
  }
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  if (binary.length !== (text.length / 4) * 3 - padding) return undefined;
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** `bytes` as standard base64. */
export function encodeBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.byteLength; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
