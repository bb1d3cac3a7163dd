import { TestScheduler } from 'rxjs/testing';

/**
 * What an error is compared by: its class, its `code` (ExecClientError's stable string), and its
 * message. Jest's toEqual compares errors by message alone, so `new ProtocolError('x')` would pass for
 * an expected `new ClosedError('x')`.
 */
export interface ErrorIdentity {
  readonly errorClass: string;
  readonly code: unknown;
  readonly message: string;
}

/** The identity of a thrown value; non-errors are left as they are. */
export function errorIdentity(error: unknown): ErrorIdentity | unknown {
  if (!(error instanceof Error)) return error;
  const code = 'code' in error ? (error as { readonly code: unknown }).code : undefined;
  return { errorClass: error.constructor.name, code, message: error.message };
}

/** Marble frames with every error notification replaced by its {@link errorIdentity}. */
function withErrorIdentities(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((frame: unknown) => {
    if (typeof frame !== 'object' || frame === null || !('notification' in frame)) return frame;
    const notification = (frame as { readonly notification: unknown }).notification;
    if (typeof notification !== 'object' || notification === null || !('kind' in notification) || notification.kind !== 'E') return frame;
    const error = 'error' in notification ? notification.error : undefined;
    return { ...frame, notification: { ...notification, error: errorIdentity(error) } };
  });
}

/**
 * A TestScheduler asserting with Jest's toEqual, where an error notification matches only an error of
 * the same class, code and message (see {@link errorIdentity}): every marble spec checks errors that way.
 */
export const testScheduler = (): TestScheduler =>
  new TestScheduler((actual, expected) => {
    expect(withErrorIdentities(actual)).toEqual(withErrorIdentities(expected));
  });
