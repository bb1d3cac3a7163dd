import fc from 'fast-check';

/** Strings over the base64 alphabet, `=`, and look-alikes Node's decoder tolerates (URL-safe, space, `Ł`). */
export const base64ishString = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('base64')),
    fc.string({ unit: fc.constantFrom(...'AQgwEIMUYcko048BZaz+/=-_ Ł\n'.split('')), maxLength: 24 }),
    fc.uint8Array({ minLength: 1, maxLength: 40 }).chain((bytes) => {
      const s = Buffer.from(bytes).toString('base64');
      return fc.tuple(fc.nat({ max: s.length - 1 }), fc.constantFrom('-', '_', '=', ' ', '!', 'Ł', 'B')).map(([at, ch]) => s.slice(0, at) + ch + s.slice(at + 1));
    }),
  );

/** Ids of every JSON type: mostly valid, sometimes not. */
export const anyId = (): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.oneof(fc.integer(), fc.string({ maxLength: 6 })) },
    { weight: 1, arbitrary: fc.constantFrom(1.5, -0.25, null, true, false, 2 ** 60, -(2 ** 53), 2 ** 53 - 1, 9007199254740993, {}, []) },
  );

/** Error members: mostly valid error objects, sometimes near misses or any JSON. */
export const anyErrorMember = (): fc.Arbitrary<unknown> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record(
        {
          code: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: -32800, max: -32000 }) }, { weight: 1, arbitrary: fc.constantFrom(1.5, '1', null) }),
          message: fc.oneof({ weight: 6, arbitrary: fc.string({ maxLength: 8 }) }, { weight: 1, arbitrary: fc.constantFrom(5, null) }),
          data: fc.jsonValue({ maxDepth: 1 }),
          extra: fc.jsonValue({ maxDepth: 1 }),
        },
        { requiredKeys: ['code', 'message'] },
      ),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
  );

const anyMethod = (): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 6, arbitrary: fc.oneof(fc.constantFrom('process/output', 'initialize', ''), fc.string({ maxLength: 6 })) }, { weight: 1, arbitrary: fc.constantFrom(3, null) });

const json = (): fc.Arbitrary<unknown> => fc.jsonValue({ maxDepth: 2 });

/**
 * Envelope-shaped objects: one of the four kinds (with possibly invalid members), plus ignorable
 * members, plus sometimes one stray member of another kind.
 */
export const envelopeObject = (): fc.Arbitrary<Record<string, unknown>> => {
  const kind = fc.oneof(
    fc.record({ id: anyId(), error: anyErrorMember() }),
    fc.record({ id: anyId(), result: json() }),
    fc.record({ id: anyId(), method: anyMethod(), params: json() }, { requiredKeys: ['id', 'method'] }),
    fc.record({ method: anyMethod(), params: json() }, { requiredKeys: ['method'] }),
  );
  const ignorable = fc.record({ jsonrpc: fc.constantFrom('2.0', '1.0', 2), trace: fc.jsonValue({ maxDepth: 1 }), other: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: [] });
  const stray = fc.oneof(
    { weight: 4, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: fc.oneof(fc.record({ id: anyId() }), fc.record({ result: json() }), fc.record({ error: anyErrorMember() }), fc.record({ method: anyMethod() })) },
  );
  return fc.tuple(kind, ignorable, stray).map(([k, i, s]): Record<string, unknown> => ({ ...i, ...k, ...s }));
};

/** JSON text of envelope-shaped objects and of arbitrary JSON values (arrays, scalars, null). */
export const inboundFrame = (): fc.Arbitrary<string> =>
  fc.oneof({ weight: 4, arbitrary: envelopeObject() }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) }).map((value) => JSON.stringify(value));

/** `process/output` params, valid or near misses in every field. */
export const processOutputParams = (): fc.Arbitrary<Record<string, unknown>> =>
  fc.record(
    {
      processId: fc.oneof({ weight: 4, arbitrary: fc.string({ maxLength: 6 }) }, { weight: 1, arbitrary: fc.constantFrom(1, null) }),
      seq: fc.oneof({ weight: 4, arbitrary: fc.nat() }, { weight: 1, arbitrary: fc.constantFrom(-1, 1.5, '1', null, 2 ** 53) }),
      stream: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('stdout', 'stderr', 'pty') }, { weight: 1, arbitrary: fc.constantFrom('tty', 'STDOUT', '', 0) }),
      chunk: fc.oneof({ weight: 4, arbitrary: base64ishString() }, { weight: 1, arbitrary: fc.constantFrom(0, null, [1]) }),
      extra: fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: ['processId', 'seq', 'stream', 'chunk'] },
  ).chain((params) =>
    fc.oneof(
      { weight: 6, arbitrary: fc.constant<Record<string, unknown>>(params) },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom(...Object.keys(params))
          .map((drop): Record<string, unknown> => Object.fromEntries(Object.entries(params).filter(([k]) => k !== drop))),
      },
    ),
  );
