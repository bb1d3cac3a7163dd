/**
 * `exec-rx run`'s gate on its output (`drainGate`): no hold while at most OUTPUT_MARK_BYTES wait in our
 * stdout, although `write()` answers false; one hold once more wait, released on the stream's `drain`
 * (or by `stop()`); every chunk reaches the reader once and in order.
 */
import { Writable } from 'node:stream';
import { drainGate, OUTPUT_MARK_BYTES, writePastMark } from '../../src/cli/output-mark';
import type { FlowHold } from '../../src/rpc/connection-flow';
import { stalledOutput, turns } from './stalled-output';

/** A source that counts its holds and releases. */
function holds(): { hold: () => FlowHold; readonly taken: () => number; readonly held: () => number } {
  let taken = 0;
  let released = 0;
  return {
    hold: () => {
      taken += 1;
      let done = false;
      return {
        release: () => {
          if (!done) released += 1;
          done = true;
        },
      };
    },
    taken: () => taken,
    held: () => taken - released,
  };
}

const chunk = (bytes: number, fill: string): Uint8Array => new Uint8Array(Buffer.alloc(bytes, fill));
const KiB = 1024;
/** How many 64 KiB chunks make the mark. */
const TO_MARK = OUTPUT_MARK_BYTES / (64 * KiB);

describe('drainGate: a hold only past OUTPUT_MARK_BYTES', () => {
  it('holds nothing while at most the mark waits, although write() answers false', () => {
    const out = stalledOutput();
    const source = holds();
    const gate = drainGate(out.stream, source.hold);
    for (let i = 0; i < TO_MARK; i += 1) gate.write(chunk(64 * KiB, 'a'));
    expect({ waiting: out.stream.writableLength, refused: out.refused(), taken: source.taken() }).toEqual({ waiting: OUTPUT_MARK_BYTES, refused: TO_MARK, taken: 0 });
    expect(TO_MARK).toBeGreaterThan(1);
    gate.stop();
  });

  it('holds once past the mark, releases on drain, and the reader gets every chunk once and in order', async () => {
    const out = stalledOutput();
    const source = holds();
    const gate = drainGate(out.stream, source.hold);
    const chunks = Array.from({ length: TO_MARK + 8 }, (_, i) => chunk(64 * KiB, String.fromCharCode(65 + (i % 26))));
    // The chunk after the mark's worth crosses it.
    for (const next of chunks.slice(0, TO_MARK + 1)) gate.write(next);
    expect({ taken: source.taken(), held: source.held(), drainListeners: out.stream.listenerCount('drain') }).toEqual({ taken: 1, held: 1, drainListeners: 1 });
    // Writes that come while held (chunks already on their way) take no second hold.
    for (const next of chunks.slice(TO_MARK + 1)) gate.write(next);
    expect(source.taken()).toBe(1);
    out.release();
    await turns();
    expect({ held: source.held(), waiting: out.stream.writableLength, drainListeners: out.stream.listenerCount('drain') }).toEqual({ held: 0, waiting: 0, drainListeners: 0 });
    expect(out.bytes().equals(Buffer.concat(chunks))).toBe(true);
    gate.stop();
  });

  it('stop() releases a hold and leaves no listener', () => {
    const out = stalledOutput();
    const source = holds();
    const gate = drainGate(out.stream, source.hold);
    gate.write(chunk(OUTPUT_MARK_BYTES + 1, 'x'));
    expect(source.held()).toBe(1);
    gate.stop();
    expect({ held: source.held(), drainListeners: out.stream.listenerCount('drain') }).toEqual({ held: 0, drainListeners: 0 });
  });

  it('never waits on a stream whose own mark is above ours (its drain would not come)', () => {
    const stream = new Writable({ highWaterMark: 4 * OUTPUT_MARK_BYTES, write: () => undefined });
    expect(writePastMark(stream, chunk(OUTPUT_MARK_BYTES + 1, 'x'))).toBe(false);
    expect(stream.writableLength).toBe(OUTPUT_MARK_BYTES + 1);
  });
});
