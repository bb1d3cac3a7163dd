import * as t from 'io-ts';

/**
 * Any value, as long as the key is there (`null` counts). `t.unknown` also accepts a missing key, which
 * would let `{"id":1}` pass as a response; `result` is declared with this codec instead.
 */
export const Present: t.Type<unknown, unknown, unknown> = new t.Type<unknown, unknown, unknown>(
  'Present',
  (u): u is unknown => u !== undefined,
  (u, c) => (u === undefined ? t.failure(u, c) : t.success(u)),
  t.identity,
);

/** Decodes a missing key only; used to report a key that must not be there, under its own path. */
const Absent: t.Type<undefined, undefined, unknown> = new t.Type<undefined, undefined, unknown>(
  'Absent',
  (u): u is undefined => u === undefined,
  (u, c) => (u === undefined ? t.success(undefined) : t.failure(u, c)),
  t.identity,
);

const isObject = (u: unknown): u is { readonly [key: string]: unknown } => typeof u === 'object' && u !== null;

/**
 * `codec`, but an object that carries any of `keys` is rejected (the error names the key's path).
 * The static type is unchanged, so `'error' in m` still narrows cleanly.
 */
export function withoutKeys<C extends t.Any>(name: string, keys: readonly string[], codec: C): t.Type<t.TypeOf<C>, t.OutputOf<C>, unknown> {
  return new t.Type<t.TypeOf<C>, t.OutputOf<C>, unknown>(
    name,
    (u): u is t.TypeOf<C> => codec.is(u) && keys.every((k) => !isObject(u) || u[k] === undefined),
    (u, c) => {
      if (isObject(u)) {
        for (const k of keys) {
          const v = u[k];
          if (v !== undefined) return t.failure(v, t.appendContext(c, k, Absent, v));
        }
      }
      return codec.validate(u, c);
    },
    (a) => codec.encode(a),
  );
}

/**
 * `codec`, with `fallback()` substituted when the key is missing (a fresh value each time, so a default
 * array is never shared). Used where the protocol says how to read an absent field (`sandboxDenied` →
 * `false`), so callers never see `undefined`. Put it in `t.type` props: the field is then required in
 * the static type, and encoding always writes it.
 */
export function withDefault<C extends t.Any>(codec: C, fallback: () => t.TypeOf<C>): t.Type<t.TypeOf<C>, t.OutputOf<C>, unknown> {
  return new t.Type<t.TypeOf<C>, t.OutputOf<C>, unknown>(
    codec.name,
    (u): u is t.TypeOf<C> => codec.is(u),
    (u, c) => (u === undefined ? t.success(fallback()) : codec.validate(u, c)),
    (a) => codec.encode(a),
  );
}
