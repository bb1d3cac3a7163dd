import { encodeRequest } from '../../src/wire/jsonrpc';
import {
  EXECUTOR_OUTPUT_WINDOW_BYTES,
  MAX_INBOUND_FRAME_BYTES,
  OUTPUT_CHUNK_MAX_BYTES,
  READ_BLOCK_MAX_BYTES,
  SAFE_CHUNK_BYTES,
  WRITE_BLOCK_MAX_BYTES,
} from '../../src/wire/limits';
import { encodeParams } from '../../src/wire/methods';

describe('limits', () => {
  it('keeps a process/write of SAFE_CHUNK_BYTES well below the executor frame limit', () => {
    const frame = encodeRequest(Number.MAX_SAFE_INTEGER, 'process/write', encodeParams('process/write', { processId: 'p'.repeat(256), chunk: Buffer.alloc(SAFE_CHUNK_BYTES), writeId: '9'.repeat(20) }));
    expect(Buffer.byteLength(frame)).toBeLessThan(MAX_INBOUND_FRAME_BYTES / 2);
  });

  it('states the executor sizes of docs/protocol.md#limits', () => {
    expect({ MAX_INBOUND_FRAME_BYTES, READ_BLOCK_MAX_BYTES, WRITE_BLOCK_MAX_BYTES, OUTPUT_CHUNK_MAX_BYTES, EXECUTOR_OUTPUT_WINDOW_BYTES }).toEqual({
      MAX_INBOUND_FRAME_BYTES: 16_777_216,
      READ_BLOCK_MAX_BYTES: 1_048_576,
      WRITE_BLOCK_MAX_BYTES: 1_048_576,
      OUTPUT_CHUNK_MAX_BYTES: 8192,
      EXECUTOR_OUTPUT_WINDOW_BYTES: 1_048_576,
    });
  });
});
