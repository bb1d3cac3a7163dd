import * as t from 'io-ts';

/**
 * The params of a method that takes none (`environment/status`, `environment/info`). Our side holds
 * `undefined` and encodes it to `undefined`, so the request omits `params`. Decoding accepts what the
 * executor accepts: a missing `params`, `null`, or `{}` (all decode to `undefined`).
 */
export const NoParams: t.Type<undefined, undefined, unknown> = new t.Type<undefined, undefined, unknown>(
  'NoParams',
  (u): u is undefined => u === undefined,
  (u, c) =>
    u === undefined || u === null || (typeof u === 'object' && !Array.isArray(u) && Object.keys(u).length === 0)
      ? t.success(undefined)
      : t.failure(u, c),
  () => undefined,
);
/** No params: `undefined`. */
export type NoParams = t.TypeOf<typeof NoParams>;
