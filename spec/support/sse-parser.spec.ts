/**
 * The spec helpers' SSE parser: the same frames whichever way the body is split (every split point,
 * and byte by byte), with LF, CRLF and CR line endings, comments, ids kept or not, and a body that
 * stops inside a frame.
 */
import type { SseFrame } from './sse-parser';
import { SseParser } from './sse-parser';

interface Parsed {
  readonly frames: SseFrame[];
  readonly comments: string[];
  readonly partial: number;
  readonly lastEventId: string | undefined;
}

function parse(pieces: readonly Uint8Array[]): Parsed {
  const frames: SseFrame[] = [];
  const comments: string[] = [];
  const parser = new SseParser({ frame: (f) => frames.push(f), comment: (c) => comments.push(c) });
  for (const piece of pieces) parser.push(piece);
  return { frames, comments, partial: parser.partialBytes, lastEventId: parser.lastEventId };
}

const BODY = ': ping\n\nid: 7\nevent: output\ndata: {"seq":7,"chunk":"aGk="}\n\r\nevent: truncated\rdata: {"nextSeq":9}\r\rid: 9\ndata: é\ndata:two\n\n';

const EXPECTED: Parsed = {
  frames: [
    { id: '7', event: 'output', data: '{"seq":7,"chunk":"aGk="}' },
    { id: undefined, event: 'truncated', data: '{"nextSeq":9}' },
    { id: '9', event: 'message', data: 'é\ntwo' },
  ],
  comments: [' ping'],
  partial: 0,
  lastEventId: '9',
};

describe('SseParser', () => {
  it('parses LF, CRLF and CR endings, comments, events without an id, and multi-line data', () => {
    expect(parse([Buffer.from(BODY)])).toEqual(EXPECTED);
  });

  it('gives the same frames for every split of the body into two pieces, and byte by byte', () => {
    const bytes = Buffer.from(BODY);
    for (let at = 0; at <= bytes.length; at += 1) {
      expect({ at, parsed: parse([bytes.subarray(0, at), bytes.subarray(at)]) }).toEqual({ at, parsed: EXPECTED });
    }
    expect(parse([...bytes].map((b) => Uint8Array.of(b)))).toEqual(EXPECTED);
  });

  it('counts the bytes of a frame the body stops inside, and dispatches nothing of it', () => {
    const parsed = parse([Buffer.from('id: 1\ndata: a\n\nid: 2\ndata: b\n')]);
    expect(parsed.frames).toEqual([{ id: '1', event: 'message', data: 'a' }]);
    expect(parsed.partial).toBe('id: 2\ndata: b\n'.length);
  });
});
