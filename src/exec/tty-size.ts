import { InvalidTtySizeError } from '../errors';

import type { TtySize } from '../wire/shared-types';

export type { TtySize } from '../wire/shared-types';

/** The largest rows or cols accepted. */
export const MAX_TTY_DIMENSION = 10_000;

/** `size` as a fresh {@link TtySize}; throws InvalidTtySizeError unless both are integers from 1 to 10000. */
export function checkTtySize(rows: number, cols: number): TtySize {
  const valid = (n: number): boolean => Number.isInteger(n) && n >= 1 && n <= MAX_TTY_DIMENSION;
  if (!valid(rows) || !valid(cols)) throw new InvalidTtySizeError(rows, cols);
  return { rows, cols };
}
