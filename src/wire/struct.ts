import * as t from 'io-ts';

/** The codec {@link struct} builds from required props only. */
export type StructC<R extends t.Props> = t.ExactC<t.TypeC<R>>;

/** The codec {@link struct} builds from required and optional props. */
export type StructWithOptionalC<R extends t.Props, O extends t.Props> = t.ExactC<t.IntersectionC<[t.TypeC<R>, t.PartialC<O>]>>;

/**
 * A named object codec: `required` keys must be present, `optional` keys may be missing, and unknown
 * keys are dropped on decode and on encode (`t.exact`), so decoded values hold only what we typed and
 * nothing we did not ask for is ever sent. Same as
 * `t.exact(t.intersection([t.type(required), t.partial(optional)]), name)`, with the two halves named
 * `<name> (required)` and `<name> (optional)` in error paths.
 */
export function struct<R extends t.Props>(name: string, required: R): StructC<R>;
export function struct<R extends t.Props, O extends t.Props>(name: string, required: R, optional: O): StructWithOptionalC<R, O>;
export function struct(name: string, required: t.Props, optional?: t.Props): t.Mixed {
  return optional === undefined
    ? t.exact(t.type(required), name)
    : t.exact(t.intersection([t.type(required, `${name} (required)`), t.partial(optional, `${name} (optional)`)]), name);
}
