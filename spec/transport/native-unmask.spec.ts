/**
 * The host unmasks what a direct-mode executor sends (it is the WebSocket client, so every frame is
 * masked) with `bufferutil`'s native code, not `ws`' byte-at-a-time fallback: docs/performance.md says
 * what that costs. This fails when the optional dependency is missing or loads its JavaScript fallback.
 */
import { createRequire } from 'node:module';

const load = createRequire(__filename);

describe('native unmask', () => {
  it('bufferutil loads its prebuilt binary, so ws unmasks natively', () => {
    const bufferUtil = load('bufferutil') as { unmask: (buffer: Buffer, mask: Buffer) => void };
    expect(Function.prototype.toString.call(bufferUtil.unmask)).toContain('[native code]');
  });

  it('the native unmask gives the bytes back', () => {
    const bufferUtil = load('bufferutil') as { mask: (source: Buffer, mask: Buffer, output: Buffer, offset: number, length: number) => void; unmask: (buffer: Buffer, mask: Buffer) => void };
    const source = Buffer.from('an executor frame of more than thirty-two bytes, so the native path runs');
    const key = Buffer.from([0x12, 0x34, 0x56, 0x78]);
    const masked = Buffer.alloc(source.byteLength);
    bufferUtil.mask(source, key, masked, 0, source.byteLength);
    expect(masked.equals(source)).toBe(false);
    bufferUtil.unmask(masked, key);
    expect(masked.equals(source)).toBe(true);
  });
});
