/**
 * Preloaded into each process the paths suite measures (`node --require cpu-at-exit.js SCRIPT …`, with
 * `EXEC_RX_BENCH_CPU_FILE` set): at exit it writes to that file one JSON object, `{"ownMs", "childrenMs"}`,
 * the process's own CPU (`process.cpuUsage()`, every thread) and that of the children it waited for
 * (`/proc/self/stat` cutime + cstime: the executor `exec-rx run` started and stopped, with the processes
 * that executor waited for). Nothing else: the measured script runs unchanged. Without the variable it
 * does nothing; a failed write is ignored (the suite then reports the turn as failed: no file).
 */
import { writeFileSync } from 'node:fs';
import { procCpu } from './proc-cpu';

const file = process.env['EXEC_RX_BENCH_CPU_FILE'];
if (file !== undefined && file !== '') {
  process.once('exit', () => {
    const own = process.cpuUsage();
    try {
      writeFileSync(file, JSON.stringify({ ownMs: (own.user + own.system) / 1000, childrenMs: procCpu(process.pid).childrenMs }));
    } catch {
      // The suite finds no file and fails the turn.
    }
  });
}
