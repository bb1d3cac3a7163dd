import { crc32 } from 'node:zlib';
import { decodeRecord, encodeRecord, MAX_RECORD_PAYLOAD_BYTES, RECORD_HEADER_BYTES } from '../../../../src/store/disk/log/record';
import type { SequencedEvent } from '../../../../src/wire/process-event';
import { closed, exited, output } from '../../../exec/event-builders';

const TIME = 1_700_000_123_456;

describe('the output log record', () => {
  const kinds: [string, SequencedEvent][] = [
    ['stdout', output(1, 'hello\n')],
    ['stderr', output(2, 'oops\n', 'stderr')],
    ['pty', output(3, '\u001b[1mbold\u001b[0m', 'pty')],
    ['empty output', output(4, '')],
    ['exited', exited(5, 3)],
    ['a signalled, sandbox-denied exit', exited(6, 137, true)],
    ['a negative exit code', exited(7, -1)],
    ['closed', closed(8)],
    ['a seq past 2^32', closed(2 ** 40 + 3)],
  ];

  it.each(kinds)('round-trips %s with its receipt time', (_name, event) => {
    const record = encodeRecord(event, TIME);
    expect(decodeRecord(record, 0, record.byteLength)).toEqual({ status: 'ok', event: { ...event, time: TIME }, size: record.byteLength });
  });

  it('lays out a fixed little-endian header with a CRC over everything after it', () => {
    const record = encodeRecord(output(258, 'ab', 'stderr'), TIME);
    expect(record.byteLength).toBe(RECORD_HEADER_BYTES + 2);
    expect(record.readUInt32LE(0)).toBe(crc32(record.subarray(4)));
    expect([...record.subarray(4, 16)]).toEqual([0x52, 0x58, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
    expect(record.readUInt32LE(16)).toBe(258);
    expect(record.readUInt32LE(24) + record.readUInt32LE(28) * 2 ** 32).toBe(TIME);
    expect(record.subarray(32).toString()).toBe('ab');
  });

  it('says a record cut short is short, and how long it claims to be', () => {
    const record = encodeRecord(output(1, 'hello'), TIME);
    expect(decodeRecord(record, 0, 10)).toEqual({ status: 'short', size: RECORD_HEADER_BYTES });
    expect(decodeRecord(record, 0, record.byteLength - 1)).toEqual({ status: 'short', size: record.byteLength });
  });

  it('finds any flipped bit: in the payload, the header or the CRC', () => {
    const record = encodeRecord(output(9, 'some output'), TIME);
    for (let byte = 0; byte < record.byteLength; byte += 1) {
      const damaged = Buffer.from(record);
      damaged[byte] = (damaged[byte] ?? 0) ^ 0x10;
      expect(decodeRecord(damaged, 0, damaged.byteLength).status).not.toBe('ok');
    }
  });

  it('refuses an implausible header without trusting its length', () => {
    const record = encodeRecord(output(1, 'x'), TIME);
    record.writeUInt32LE(MAX_RECORD_PAYLOAD_BYTES + 1, 8);
    expect(decodeRecord(record, 0, record.byteLength)).toEqual({ status: 'bad', size: undefined });
  });
});
