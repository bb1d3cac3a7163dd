/**
 * The live-subscriber lists of a history and of a process's state: copy on write, so an emission can loop
 * over the list it read while subscribers come and go; an empty list is one shared constant, so an idle
 * owner keeps no array of its own.
 */

const EMPTY: readonly never[] = [];

/** The empty list, shared by every owner without subscribers (never written). */
export function noSubscribers<T>(): readonly T[] {
  return EMPTY;
}

/** `list` with `subscriber` added at the end (a new array). */
export function withSubscriber<T>(list: readonly T[], subscriber: T): readonly T[] {
  return [...list, subscriber];
}

/** `list` without `subscriber` (a new array, or the shared empty one). */
export function withoutSubscriber<T>(list: readonly T[], subscriber: T): readonly T[] {
  const rest = list.filter((s) => s !== subscriber);
  return rest.length === 0 ? EMPTY : rest;
}
