import type * as t from 'io-ts';
import * as E from 'fp-ts/lib/Either';
import { PathReporter } from 'io-ts/lib/PathReporter';
import { DecodeError } from '../errors';

/**
 * Runs `codec` on `input`. This is the one place io-ts `Errors` become our {@link DecodeError}: `what`
 * is the codec's name and each detail names the failing path, e.g.
 * `Invalid value "x" supplied to : ProcessOutputNotification/seq: NonNegativeInteger`.
 */
export const decodeWith =
  <A, O>(codec: t.Type<A, O, unknown>) =>
  (input: unknown): E.Either<DecodeError, A> => {
    const result = codec.decode(input);
    return E.isRight(result) ? result : E.left(new DecodeError(codec.name, PathReporter.report(result)));
  };

/** `JSON.parse` that returns a {@link DecodeError} (what: `JSON`) instead of throwing. */
export function parseJson(text: string): E.Either<DecodeError, unknown> {
  try {
    return E.right(JSON.parse(text) as unknown);
  } catch (cause) {
    return E.left(new DecodeError('JSON', [cause instanceof Error ? cause.message : String(cause)]));
  }
}

/** What {@link tryParseJson} returns for text that is not JSON. */
export const NOT_JSON: unique symbol = Symbol('NOT_JSON');

/** `JSON.parse`, or {@link NOT_JSON} when it throws: no Either and no error object per frame. */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}
