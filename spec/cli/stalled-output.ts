/**
 * A stand-in for our stdout or stderr whose reader stalls until the spec releases it: each write is
 * recorded at once but completes only on `release()`, so `writableLength` is exactly the bytes written
 * and not released (the spec controls it by what it writes), and with Node's mark at 4 bytes `write()`
 * answers false for nearly every write. 'drain' comes as Node emits it: after a release empties it.
 */
import { Writable } from 'node:stream';

/** A stalled writable and what reached it. */
export interface StalledOutput {
  readonly stream: Writable;
  /** Every chunk handed to `write()` so far (released or not), in order, joined. */
  readonly handed: () => Buffer;
  /** What the stalled reader got: the chunks the stream passed on (only the first until a release), in order, joined. */
  readonly bytes: () => Buffer;
  /** How many writes answered false. */
  readonly refused: () => number;
  /** Completes the writes held so far, and every later write at once. */
  release(): void;
}

/** A writable whose writes complete only when the spec says (a reader that stalls); Node's own mark 4 bytes. */
export function stalledOutput(): StalledOutput {
  const handed: Buffer[] = [];
  const written: Buffer[] = [];
  const held: (() => void)[] = [];
  let releasing = false;
  let refused = 0;
  const stream = new Writable({
    highWaterMark: 4,
    write: (chunk: Buffer, _encoding, callback) => {
      written.push(chunk);
      if (releasing) callback();
      else held.push(() => callback());
    },
  });
  const write = stream.write.bind(stream);
  stream.write = ((chunk: Uint8Array) => {
    handed.push(Buffer.from(chunk));
    const answer = write(chunk);
    if (!answer) refused += 1;
    return answer;
  }) as Writable['write'];
  return {
    stream,
    handed: () => Buffer.concat(handed),
    bytes: () => Buffer.concat(written),
    refused: () => refused,
    release: () => {
      releasing = true;
      for (const done of held.splice(0)) done();
    },
  };
}

/** Lets the streams' callbacks and the promise work run. */
export const turns = async (count = 5): Promise<void> => {
  for (let i = 0; i < count; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
};
