import { createHash } from 'node:crypto';

/** The sha256 of `count` bytes of `y\n`, as `yes | head -c count` writes them (hashed block by block, never held whole). */
export function yesDigest(count: number): string {
  const block = Buffer.from('y\n'.repeat(512 * 1024));
  const hash = createHash('sha256');
  let left = count;
  for (; left >= block.length; left -= block.length) hash.update(block);
  hash.update(block.subarray(0, left));
  return hash.digest('hex');
}
