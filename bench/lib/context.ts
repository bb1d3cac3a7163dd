/** What every suite gets from the runner. */
export interface BenchContext {
  /** `--quick`: a smoke run with small sizes and few runs. */
  readonly quick: boolean;
  /** Paired runs per figure. */
  readonly runs: number;
  readonly log: (line: string) => void;
  /** A full GC (when available) and a short pause: run between turns, outside the measurement. */
  readonly settle: () => Promise<void>;
}

/** `full` normally, `quick` under `--quick`. */
export const sized = <T>(context: BenchContext, full: T, quick: T): T => (context.quick ? quick : full);
