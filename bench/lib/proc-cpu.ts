/**
 * CPU time of other processes from `/proc` (Linux), in ms: a process's own (`utime` + `stime`, every
 * thread) and that of the children it waited for (`cutime` + `cstime`, with what they waited for), and a
 * process's live children. What the paths suite reads around each turn; 0 and `[]` where `/proc` has no
 * such process.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ on Linux: the unit of the `/proc/<pid>/stat` times. */
const TICKS_PER_SECOND = 100;

/** A process's CPU so far, ms. */
export interface ProcCpu {
  /** Its own threads (`utime` + `stime`). */
  readonly ownMs: number;
  /** The children it has waited for, with theirs (`cutime` + `cstime`). */
  readonly childrenMs: number;
}

/** The CPU `pid` used so far; zeros when it is gone. */
export function procCpu(pid: number): ProcCpu {
  try {
    // After the command's closing paren: state is field 3; utime, stime, cutime, cstime are fields 14-17.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const ms = (at: number): number => (Number(fields[at] ?? 0) * 1000) / TICKS_PER_SECOND;
    return { ownMs: ms(11) + ms(12), childrenMs: ms(13) + ms(14) };
  } catch {
    return { ownMs: 0, childrenMs: 0 };
  }
}

/** The live children of `pid` (every thread's list: a child is listed under the thread that made it). */
export function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/** The command name of `pid` (`/proc/<pid>/comm`), `?` when it is gone. */
export function commOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '?';
  }
}
