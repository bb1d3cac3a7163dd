/**
 * Test-only named fault points (docs/architecture.md, "Fault points"): `EXEC_RX_FAULT=<point>` in the
 * host's environment makes the host process die at once (SIGKILL, as a crash would) when a start of the
 * operator API reaches that point, so that a spec can crash it there without timing. Read once, when
 * the host starts; unset, nothing happens.
 */

/** The points of a keyed start (one with an `Idempotency-Key`) where the host can be made to crash. */
export const START_FAULT_POINTS = ['start:before-record', 'start:after-record', 'start:after-send'] as const;

/**
 * `start:before-record`: before the start is recorded in the data dir (nothing recorded, nothing sent);
 * `start:after-record`: recorded, `process/start` not sent; `start:after-send`: the executor answered
 * `process/start`, and nothing was written since it was sent (the record still says `sent`; the
 * process's metadata was written before the send): what the data dir holds is what a crash at any
 * instant between the send and the answer leaves.
 */
export type StartFaultPoint = (typeof START_FAULT_POINTS)[number];

/** The fault point `value` (the `EXEC_RX_FAULT` variable) names; undefined for anything else. */
export function startFaultOf(value: string | undefined): StartFaultPoint | undefined {
  return START_FAULT_POINTS.find((point) => point === value);
}

/** Kills the current process at once, as a crash would (no exit handlers, nothing flushed). */
export function crashNow(): void {
  process.kill(process.pid, 'SIGKILL');
}
