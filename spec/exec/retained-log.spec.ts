import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { EventHistory } from '../../src/exec/event-history';
import type { ProcessEvent } from '../../src/exec/process-event';
import { RetainedLog } from '../../src/exec/retained-log';
import type { OutputEvent, SequencedEvent } from '../../src/wire/process-event';
import { closed, exited, output, outputBytes } from './event-builders';

const replay = (history: EventHistory): ProcessEvent[] => {
  const seen: ProcessEvent[] = [];
  history.events$.subscribe((event) => seen.push(event)).unsubscribe();
  return seen;
};

describe('RetainedLog', () => {
  it('gives every event back equal, outputs with their own copy of the bytes in the class they came in', () => {
    const log = new RetainedLog();
    const buffer = outputBytes(1, Buffer.from('from the wire'), 'stderr');
    const plain = output(2, 'a plain Uint8Array', 'pty');
    const exit = exited(3, 7, true);
    const close = closed(4);
    for (const event of [buffer, plain, exit, close]) log.push(event);
    const back = [0, 1, 2, 3].map((i) => log.at(i));
    expect(back).toEqual([buffer, plain, exit, close]);
    expect(back.map((event) => (event?.type === 'output' ? event.chunk.constructor.name : event?.type))).toEqual(['Buffer', 'Uint8Array', 'exited', 'closed']);
    // Copies, not the originals: the log never hands out memory it reuses.
    expect(back[0]).not.toBe(buffer);
    const copy = (back[0] as OutputEvent).chunk;
    expect(copy.buffer === buffer.chunk.buffer && copy.byteOffset === buffer.chunk.byteOffset).toBe(false);
    // exited and closed are kept as numbers (a finished process holds no event object) and made again equal.
    expect(back[2]).not.toBe(exit);
    expect(back[2]).toStrictEqual(exit);
    expect(back[3]).toStrictEqual(close);
  });

  it('keeps exited and closed as numbers that hold no bytes, and an exit code out of their range as the event', () => {
    const log = new RetainedLog();
    const events: SequencedEvent[] = [output(1, 'abc'), exited(2, 255, false), exited(3, 2 ** 27 - 1, true), exited(4, -1, false), exited(5, 2 ** 27, false), closed(6)];
    for (const event of events) log.push(event);
    // An exit code must never count as payload bytes (255 would be 31 bytes read as an output's slot).
    expect(log.payloadBytes).toBe(3);
    expect([0, 1, 2, 3, 4, 5].map((i) => log.at(i))).toStrictEqual(events);
    expect(log.at(3)).toBe(events[3]);
    expect(log.at(4)).toBe(events[4]);
    expect(log.shift()).toBe(3);
    for (let i = 0; i < 5; i += 1) expect(log.shift()).toBe(0);
    expect(log.payloadBytes).toBe(0);
    // A full ring rotating its oldest out (an exited) for an output frees no bytes.
    const rotating = new RetainedLog();
    for (const event of [exited(1, 1, false), output(2, 'xy'), output(3, 'z'), closed(4)]) rotating.push(event);
    expect(rotating.rotate(output(5, 'four'), 100)).toBe(0);
    expect(rotating.payloadBytes).toBe(7);
    expect(rotating.rotate(output(6, 'q'), 100)).toBe(2);
    expect(rotating.at(1)).toStrictEqual(closed(4));
  });

  it('compacts an ended log of at most 64 bytes into a ring of exactly its bytes, wrapped or not, and gives back and evicts every byte', () => {
    const text = (event: SequencedEvent | undefined): string => (event?.type === 'output' ? Buffer.from(event.chunk).toString() : String(event?.type));
    const log = new RetainedLog();
    log.push(output(1, 'x'.repeat(40)));
    log.push(output(2, 'y'.repeat(20)));
    expect(log.shift()).toBe(40);
    log.push(output(3, 'z'.repeat(30))); // wraps around the 64-byte ring
    log.push(exited(4, 0, false));
    log.push(closed(5));
    log.compact();
    expect(log.payloadBytes).toBe(50);
    expect([0, 1, 2, 3].map((i) => text(log.at(i)))).toEqual(['y'.repeat(20), 'z'.repeat(30), 'exited', 'closed']);
    expect(log.shift()).toBe(20);
    expect([0, 1, 2].map((i) => text(log.at(i)))).toEqual(['z'.repeat(30), 'exited', 'closed']);
    const big = new RetainedLog();
    big.push(output(1, 'w'.repeat(65)));
    big.compact();
    expect(text(big.at(0))).toBe('w'.repeat(65));
    const none = new RetainedLog();
    none.push(output(1, ''));
    none.push(closed(2));
    none.compact();
    expect(none.at(0)).toStrictEqual(output(1, ''));
  });

  it('makes an output again on every call and keeps none of them (a replay never holds the bytes twice)', () => {
    const log = new RetainedLog();
    log.push(outputBytes(1, Buffer.from('kept once, in the ring')));
    const first = log.at(0) as OutputEvent;
    // A consumer that writes into its copy changes nothing the log gives out next.
    first.chunk.fill(0x21);
    const second = log.at(0) as OutputEvent;
    expect(second).not.toBe(first);
    expect(second.chunk.buffer === first.chunk.buffer && second.chunk.byteOffset === first.chunk.byteOffset).toBe(false);
    expect(Buffer.from(second.chunk).toString()).toBe('kept once, in the ring');
    expect(log.payloadBytes).toBe(22);
  });

  it('keeps counts and bytes exact through any pushes and shifts, with the bytes of each event intact (property)', () => {
    const size = fc.oneof(fc.constantFrom(0, 64, 128, 4096, 8192), fc.integer({ min: 0, max: 9000 }));
    const step = fc.oneof(fc.record({ push: size }), fc.record({ shift: fc.constant(true) }));
    fc.assert(
      fc.property(fc.array(step, { maxLength: 120 }), (steps) => {
        const log = new RetainedLog();
        const model: SequencedEvent[] = [];
        let seq = 0;
        for (const s of steps) {
          if ('push' in s) {
            seq += 1;
            const event = outputBytes(seq, randomBytes(s.push));
            log.push(event);
            model.push(event);
          } else {
            const dropped = model.shift();
            expect(log.shift()).toBe(dropped?.type === 'output' ? dropped.chunk.byteLength : 0);
          }
          expect(log.length).toBe(model.length);
          expect(log.payloadBytes).toBe(model.reduce((n, e) => n + (e.type === 'output' ? e.chunk.byteLength : 0), 0));
          expect(log.firstSeq).toBe(model[0]?.seq);
        }
        expect(model.map((_, i) => log.at(i))).toEqual(model);
      }),
      { numRuns: 150 },
    );
  });

  it('never writes over retained bytes when the byte ring is exactly full (sizes that fill it to the byte)', () => {
    for (const sizes of [[8192, 8192], [64, 64, 64], [4096, 4096, 8192, 16_384], [100, 28, 128, 256]]) {
      const log = new RetainedLog();
      const events = sizes.map((size, i) => outputBytes(i + 1, randomBytes(size)));
      for (const event of events) log.push(event);
      expect(events.map((_, i) => log.at(i))).toEqual(events);
      // And after the ring turned: shift one, push one of the same size, at every position.
      for (let turn = 0; turn < sizes.length * 2; turn += 1) {
        const gone = events.shift();
        log.shift();
        const next = outputBytes((gone?.seq ?? 0) + sizes.length, randomBytes(gone?.type === 'output' ? gone.chunk.byteLength : 0));
        events.push(next);
        log.push(next);
        expect(events.map((_, i) => log.at(i))).toEqual(events);
      }
    }
  });

  it('gives its byte ring back once a big history is mostly evicted', () => {
    const history = new EventHistory({ maxEvents: 1000, maxBytes: 1 << 20 });
    for (let seq = 1; seq <= 128; seq += 1) history.append(outputBytes(seq, randomBytes(8192)));
    history.release();
    expect({ events: history.retainedEvents, bytes: history.retainedBytes }).toEqual({ events: 0, bytes: 0 });
  });
});

describe('EventHistory chunks a consumer holds', () => {
  it('stay as they were after they left the history and its byte ring was reused many times over', () => {
    const history = new EventHistory({ maxEvents: 8, maxBytes: 64 * 1024 });
    const live: Uint8Array[] = [];
    history.events$.subscribe((event) => {
      if (event.type === 'output') live.push(event.chunk);
    });
    const sent: Buffer[] = [];
    let seq = 0;
    const append = (): void => {
      seq += 1;
      const bytes = randomBytes(8000);
      sent.push(bytes);
      history.append(outputBytes(seq, Buffer.from(bytes)));
    };
    for (let i = 0; i < 8; i += 1) append();
    // A late subscriber's replay: copies made from the byte ring.
    const replayed = replay(history).flatMap((event) => (event.type === 'output' ? [event] : []));
    expect(replayed.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (let i = 0; i < 200; i += 1) append();
    const digest = (chunks: readonly Uint8Array[]): string[] => chunks.map((chunk) => createHash('sha256').update(chunk).digest('hex'));
    expect(digest(live)).toEqual(digest(sent));
    expect(digest(replayed.map((event) => event.chunk))).toEqual(digest(sent.slice(0, 8)));
  });
});
