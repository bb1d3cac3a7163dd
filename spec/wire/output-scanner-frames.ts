import fc from 'fast-check';

/**
 * Frame texts for the output scanner's property specs: `process/output` notifications written every way
 * JSON allows (key orders, whitespace, escapes) and near misses in every part, as JSON text, since the
 * scanner reads text and `JSON.stringify` writes only one spelling.
 */

/** JSON whitespace runs (mostly empty), and now and then a character JSON.parse refuses as whitespace. */
const space = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 80, arbitrary: fc.constant('') },
    { weight: 40, arbitrary: fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), minLength: 1, maxLength: 4 }) },
    { weight: 1, arbitrary: fc.constantFrom('\u00a0', '\f', '\v', '\u2028', '\ufeff') },
  );

/** `s` as a JSON string literal, with some characters written as `\uXXXX` or `\/` escapes when `escape` is set. */
const stringLiteral = (s: string, escapeAt: number[]): string => {
  const plain = JSON.stringify(s);
  if (escapeAt.length === 0 || s.length === 0) return plain;
  const inner = Array.from(s, (ch, i) => {
    if (!escapeAt.includes(i % 8)) return JSON.stringify(ch).slice(1, -1);
    if (ch === '/') return '\\/';
    return Array.from(ch, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  }).join('');
  return `"${inner}"`;
};

/** A string literal: plain (mostly) or with some escapes. */
const literal = (s: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc
    .tuple(s, fc.oneof({ weight: 5, arbitrary: fc.constant<number[]>([]) }, { weight: 1, arbitrary: fc.array(fc.nat({ max: 7 }), { minLength: 1, maxLength: 3 }) }))
    .map(([value, escapeAt]) => stringLiteral(value, escapeAt));

const processIdValue = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 8, arbitrary: literal(fc.oneof(fc.uuid(), fc.string({ maxLength: 10 }), fc.string({ unit: 'binary', maxLength: 10 }))) },
    { weight: 1, arbitrary: fc.constantFrom('1', 'null', '["p"]', '"a\u0001b"', '"tab\there"', '"open', '"a\\qb"') },
  );

const seqValue = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.oneof(fc.nat(), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.constantFrom(0, 9007199254740991)).map(String) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '9007199254740992',
        '9007199254740993',
        '18446744073709551615',
        '99999999999999999',
        '1.0',
        '1.5',
        '1e3',
        '1E2',
        '10e-1',
        '-0',
        '-1',
        '01',
        '00',
        '0x1',
        '"1"',
        'null',
        '1.',
        '+1',
        'Infinity',
      ),
    },
  );

const streamValue = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 8, arbitrary: literal(fc.constantFrom('stdout', 'stderr', 'pty')) },
    { weight: 1, arbitrary: fc.constantFrom('"tty"', '"STDOUT"', '""', '0', 'null', '"stdout', '"pty "') },
  );

/** Sizes 0..N, with the chunk arena's bounds (4 KiB, 16 KiB) and the executor's 8 KiB reached now and then. */
const chunkBytes = (): fc.Arbitrary<Uint8Array> =>
  fc.oneof(
    { weight: 10, arbitrary: fc.uint8Array({ maxLength: 200 }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.oneof(fc.integer({ min: 4090, max: 4100 }), fc.constantFrom(8192, 12000, 16384, 16385)), fc.nat({ max: 255 }))
        .map(([n, step]) => new Uint8Array(n).map((_b, i) => (i * step + i * i) & 255)),
    },
  );

const chunkValue = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 10, arbitrary: chunkBytes().map((bytes) => `"${Buffer.from(bytes).toString('base64')}"`) },
    // Escapes a decoder would never see in the executor's output, but JSON allows.
    {
      weight: 2,
      arbitrary: fc
        .uint8Array({ minLength: 1, maxLength: 60 })
        .map((bytes) => Buffer.from(bytes).toString('base64'))
        .chain((b64) => literal(fc.constant(b64))),
    },
    // Near misses: URL-safe, a space, a lost padding, a non-ASCII look-alike, non-zero unused bits, not a string.
    {
      weight: 2,
      arbitrary: fc.uint8Array({ minLength: 1, maxLength: 40 }).chain((bytes) => {
        const b64 = Buffer.from(bytes).toString('base64');
        return fc
          .tuple(fc.nat({ max: b64.length - 1 }), fc.constantFrom('-', '_', '=', ' ', '!', 'Ł', 'B', '\\', '"'))
          .map(([at, ch]) => JSON.stringify(b64.slice(0, at) + ch + b64.slice(at + 1)));
      }),
    },
    { weight: 1, arbitrary: fc.constantFrom('"QQ=="', '"QR=="', '"QUI="', '"QUJ="', '"QQ"', '"Q==="', '0', 'null', '["QQ=="]', '{}', '"QUJD\\"') },
  );

const anyJson = (): fc.Arbitrary<string> => fc.jsonValue({ maxDepth: 1 }).map((v) => JSON.stringify(v));

type Entry = readonly [key: string, value: string];

/** `{entries}` with whitespace anywhere between tokens, keys in the order given. */
const objectText = (entries: fc.Arbitrary<Entry[]>): fc.Arbitrary<string> =>
  entries.chain((list) =>
    fc.array(space(), { minLength: list.length * 4 + 2, maxLength: list.length * 4 + 2 }).map((ws) => {
      const parts = list.map(([key, value], i) => `${ws[i * 4] ?? ''}${key}${ws[i * 4 + 1] ?? ''}:${ws[i * 4 + 2] ?? ''}${value}${ws[i * 4 + 3] ?? ''}`);
      return `{${parts.join(',')}${list.length === 0 ? (ws[0] ?? '') : ''}}`;
    }),
  );

/** Keys in a random order, sometimes one left out, sometimes one repeated, sometimes an extra one. */
const shuffled = (required: Entry[], extras: fc.Arbitrary<Entry[]>): fc.Arbitrary<Entry[]> =>
  fc
    .tuple(
      fc.shuffledSubarray(required, { minLength: required.length, maxLength: required.length }),
      fc.oneof({ weight: 8, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.nat({ max: required.length - 1 }) }),
      fc.oneof({ weight: 8, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.nat({ max: required.length - 1 }) }),
      extras,
      fc.nat(),
    )
    .map(([order, drop, repeat, extra, at]) => {
      const list: Entry[] = order.filter((_e, i) => i !== drop);
      const again = order[repeat];
      if (again !== undefined) list.splice(at % (list.length + 1), 0, again);
      for (const e of extra) list.splice(at % (list.length + 1), 0, e);
      return list;
    });

const key = (name: string): fc.Arbitrary<string> => fc.oneof({ weight: 10, arbitrary: fc.constant(JSON.stringify(name)) }, { weight: 1, arbitrary: literal(fc.constant(name)) });

const paramsText = (): fc.Arbitrary<string> =>
  fc
    .record({ pk: key('processId'), pv: processIdValue(), sk: key('seq'), sv: seqValue(), tk: key('stream'), tv: streamValue(), ck: key('chunk'), cv: chunkValue() })
    .chain(({ pk, pv, sk, sv, tk, tv, ck, cv }) => {
      const extra = fc.oneof(
        { weight: 8, arbitrary: fc.constant<Entry[]>([]) },
        { weight: 1, arbitrary: fc.tuple(fc.constantFrom('"extra"', '"processid"', '"Seq"', '"__proto__"', '""'), anyJson()).map((e): Entry[] => [e]) },
      );
      return objectText(shuffled([[pk, pv], [sk, sv], [tk, tv], [ck, cv]], extra));
    });

const methodValue = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 10, arbitrary: literal(fc.constant('process/output')) },
    { weight: 1, arbitrary: fc.constantFrom('"process/exited"', '"process/outputs"', '"process/outpu"', '"Process/output"', 'null', '3') },
  );

const envelopeExtra = (): fc.Arbitrary<Entry[]> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant<Entry[]>([]) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('"jsonrpc"', '"id"', '"result"', '"error"', '"trace"', '"other"'), anyJson()).map((e): Entry[] => [e]) },
  );

/** A `process/output` frame's text: mostly one the codecs accept, written any way JSON allows; near misses in every part. */
export const outputFrameText = (): fc.Arbitrary<string> =>
  fc
    .tuple(
      key('method'),
      methodValue(),
      key('params'),
      fc.oneof({ weight: 12, arbitrary: paramsText() }, { weight: 1, arbitrary: fc.constantFrom('null', '[]', '{}', '"p"') }),
      space(),
      space(),
      fc.oneof({ weight: 20, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('x', '}', ',', '{}', '\u0000') }),
    )
    .chain(([mk, mv, pk, pv, lead, tail, garbage]) => objectText(shuffled([[mk, mv], [pk, pv]], envelopeExtra())).map((text) => `${lead}${text}${tail}${garbage}`));

/** JSON whitespace only (or none). */
const jsonSpace = (): fc.Arbitrary<string> => fc.oneof(fc.constant(''), fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), maxLength: 3 }));

/** `{entries}` in a random order, JSON whitespace around every token. */
const plainObject = (entries: Entry[]): fc.Arbitrary<string> =>
  fc
    .tuple(fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length }), fc.array(jsonSpace(), { minLength: 4 * entries.length + 1, maxLength: 4 * entries.length + 1 }))
    .map(([order, ws]) => `{${order.map(([k, v], i) => `${ws[4 * i] ?? ''}${k}${ws[4 * i + 1] ?? ''}:${ws[4 * i + 2] ?? ''}${v}${ws[4 * i + 3] ?? ''}`).join(',')}}${ws[4 * entries.length] ?? ''}`);

/**
 * A `process/output` frame the scanner must read: valid fields only, written without escapes and
 * without other members, in any order, with any JSON whitespace.
 */
export const plainOutputFrameText = (): fc.Arbitrary<string> =>
  fc
    .record({
      processId: fc.oneof(fc.uuid(), fc.string({ unit: 'binary', maxLength: 12 }).filter((s) => !/[\u0000-\u001f"\\]/.test(s))),
      seq: fc.oneof(fc.nat(), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
      stream: fc.constantFrom('stdout', 'stderr', 'pty'),
      chunk: chunkBytes(),
    })
    .chain(({ processId, seq, stream, chunk }) =>
      plainObject([
        ['"processId"', JSON.stringify(processId)],
        ['"seq"', String(seq)],
        ['"stream"', `"${stream}"`],
        ['"chunk"', `"${Buffer.from(chunk).toString('base64')}"`],
      ]),
    )
    .chain((params) => plainObject([['"method"', '"process/output"'], ['"params"', params]]));

/**
 * Frames in the executor's own layout (the scanner's fast path), with near misses in every value and
 * after the object, and processIds from a small set so that one frame's often repeats the last one's.
 */
export const executorLayoutFrameText = (): fc.Arbitrary<string> =>
  fc
    .record({
      processId: fc.oneof({ weight: 3, arbitrary: fc.constantFrom('"p1"', '"p2"', '"c0a8f7e2-1d2b-4c3a-9e8f-0123456789ab"', '"p\\u0031"', '"p\u00011"') }, { weight: 1, arbitrary: processIdValue() }),
      seq: seqValue(),
      before: fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 1, arbitrary: space() }),
      after: fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 1, arbitrary: space() }),
      stream: streamValue(),
      chunk: chunkValue(),
      tail: fc.oneof({ weight: 10, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom(' ', '\n', 'x', '}', ',"extra":1}') }),
    })
    .map(({ processId, seq, before, after, stream, chunk, tail }) => {
      const text = `{"method":"process/output","params":{"processId":${processId},"seq":${before}${seq}${after},"stream":${stream},"chunk":${chunk}}}${tail}`;
      // `,"extra":1}` goes inside params.
      return tail.startsWith(',') ? `${text.slice(0, -2)}${tail}}` : text;
    });
