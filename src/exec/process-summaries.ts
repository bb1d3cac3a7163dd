/** What {@link ExecProcess.retained} reports: the replay history a process keeps, for bookkeeping. */
export interface RetainedHistory {
  /** Events kept for replay to late subscribers. */
  readonly events: number;
  /** Output bytes those events hold. */
  readonly bytes: number;
  /** Current subscribers of `events$` and its views. */
  readonly subscribers: number;
}

/** What {@link ExecProcess.collect} resolves with: all output as UTF-8 text, one string per stream. */
export interface CollectedOutput {
  /** Everything written to stdout. */
  readonly stdout: string;
  /** Everything written to stderr. */
  readonly stderr: string;
  /** Everything written to the terminal (a tty process; stdout and stderr merged). */
  readonly pty: string;
  /** The exit code (128 + signal number for a signalled process). */
  readonly exitCode: number;
}

/** What {@link ExecProcess.wait} resolves with once the process has exited. */
export interface ProcessExit {
  /** The exit code (128 + signal number for a signalled process: 130 after `interrupt`, 137 after `terminate`). */
  readonly exitCode: number;
}
