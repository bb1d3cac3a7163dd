/**
 * Base64 for the client, with what every browser and Node 20 have (`atob`/`btoa`): the client must not
 * need Node's Buffer.
 */

/** The bytes standard base64 `text` encodes; throws a DOMException when it is not base64. */
export function decodeBase64(text: string): Uint8Array {
  const binary = atob(text);
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
