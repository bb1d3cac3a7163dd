/**
 * The disk log store's history of a process: the {@link PacedHistory} over its `OutputLog` (the names the
 * disk store and its specs have always used).
 */
import { PacedHistory } from '../paced-history';
import type { OutputLog } from './log/output-log';

export { DEFAULT_REPLAY_READ_BYTES } from '../paced-history';
export type { PacedHistoryHooks as DiskHistoryHooks, PacedHistoryOptions as DiskHistoryOptions } from '../paced-history';

/** The history of a process kept in an `OutputLog` on disk (see {@link PacedHistory}). */
export const DiskHistory = PacedHistory;
/** The history of a process kept in an `OutputLog` on disk. */
export type DiskHistory = PacedHistory<OutputLog>;
