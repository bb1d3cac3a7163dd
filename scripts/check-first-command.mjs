// @ts-check
/**
 * `npm run check:first-command` (in `npm test`, right after the build): the README's first command, as a
 * user types it on a fresh clone, run in this tree as it is. Outside jest on purpose: no jest worker, no
 * ts-jest, nothing loaded before the command but this script, so the time is the user's time.
 *
 * What it proves, and how:
 *
 * 1. The first command is fast and does its job. The command is read from README.md, the first fenced
 *    block under "Install and run", the line marked `# the main job`, so the README and this check cannot
 *    drift. Its leading `npm ci && ` is dropped (npm ci has happened: CI runs `npm ci` and then `npm test`,
 *    whose build runs just before this). The rest runs verbatim with `bash -c` in the repository's root,
 *    stdin /dev/null. It must exit 0, print exactly what `uname -a` prints here, and take under 3 s, from
 *    spawning bash to its exit: the CLI's start, the codex executor's start, registration and stop
 *    included. The CPU figure is what bash and its reaped descendants used (cutime + cstime of
 *    /proc/self/stat before and after; Linux).
 * 2. The same command runs the current build. A rebuild rewrites dist/; rather than a one-minute rebuild,
 *    the check changes the build as a rebuild would: it appends one statement to the built entry
 *    dist/src/cli/main.js and one to dist/src/cli/run/run-command.js (the module `run` loads), each
 *    writing a fresh random marker to stderr when node loads the file. It runs the same command again and
 *    requires both markers, exit 0 and the same output. A command that runs a copy made before (npx's
 *    cache, a bundle, another clone) cannot print markers made a moment ago. The files' bytes are
 *    restored in a `finally` block, and on SIGINT, SIGTERM and SIGHUP; should the check be killed with
 *    SIGKILL in between, the appended lines carry a tag and the next run removes them first.
 * 3. The command leaves nothing running. Each run's environment carries a variable with a random id,
 *    which every descendant inherits (the CLI, the codex executor it starts in a process group of its own,
 *    the command the executor runs). After the run no process may still carry it (/proc/PID/environ,
 *    Linux); any still there after 3 s are named, killed and fail the check.
 *
 * Prints one line per result with its figures; exits 1 on any failure, naming it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LIMIT_S = 3;
/** A run that has not ended by then is killed (the check must end, whatever the command does). */
const RUN_TIMEOUT_MS = 60_000;
/** How long descendants get to go after the command ended, before they count as left running. */
const LEFTOVER_GRACE_MS = 3_000;
const TAG_VARIABLE = 'EXEC_RX_FIRST_COMMAND_CHECK';
/** Every line the check appends to a built file ends with this comment, so a leftover can be found. */
const APPENDED_TAG = '// check-first-command: appended marker, removed after the check';
const APPENDED_LINE = /\n[^\n]*\/\/ check-first-command: appended marker, removed after the check\n/g;
/** The built files the second run must load: the bin's entry and the module of `run`. */
const MARKED = [join('dist', 'src', 'cli', 'main.js'), join('dist', 'src', 'cli', 'run', 'run-command.js')];

/** @param {string} message */
function fail(message) {
  throw new Error(message);
}

/** The README's first command: the line marked as the main job in the first block under "Install and run". */
function firstCommand() {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n');
  const heading = lines.indexOf('## Install and run');
  if (heading < 0) fail('README.md has no "## Install and run" section');
  const open = lines.findIndex((line, index) => index > heading && line.startsWith('```'));
  const next = lines.findIndex((line, index) => index > heading && line.startsWith('## '));
  if (open < 0 || (next >= 0 && next < open)) fail('README.md has no code block under "Install and run"');
  const close = lines.findIndex((line, index) => index > open && line.startsWith('```'));
  const block = lines.slice(open + 1, close < 0 ? undefined : close);
  const marked = block.filter((line) => line.includes('# the main job'));
  if (marked.length !== 1) fail(`README.md's "Install and run" block has ${marked.length} lines marked "# the main job" (one expected)`);
  const line = marked[0] ?? '';
  const PREFIX = 'npm ci && ';
  if (!line.startsWith(PREFIX)) fail(`README.md's first command no longer starts with \`${PREFIX}\`: ${line}`);
  return { line: open + 2 + block.indexOf(line), command: line.slice(PREFIX.length), shown: line.slice(PREFIX.length).replace(/\s+#.*$/, '') };
}

/** CPU seconds this process's reaped children used so far (cutime + cstime), or undefined off Linux. */
const clockTicks = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();
function childrenCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of proc(5); index 0 here is field 3.
    return (Number(fields[13]) + Number(fields[14])) / clockTicks;
  } catch {
    return undefined;
  }
}

/** Pids (and command lines) of the processes whose environment carries `TAG_VARIABLE=id`. */
function carrying(/** @type {string} */ id) {
  const wanted = `${TAG_VARIABLE}=${id}`;
  /** @type {{ pid: number, cmdline: string }[]} */
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(wanted)) continue;
      found.push({ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0').join(' ').trim() });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}
const canScan = existsSync('/proc/self/environ');

/** @type {import('node:child_process').ChildProcess | undefined} */
let running;
/** @type {string | undefined} */
let runningId;
/** The built files' original bytes while markers are appended to them. */
const originals = new Map();

/** Writes back every marked file's original bytes (synchronous: also from a signal handler). */
function restoreBuild() {
  for (const [path, bytes] of originals) writeFileSync(path, bytes);
  originals.clear();
}

/** @param {number} pid @param {NodeJS.Signals} signal */
function signal(pid, signal) {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/** Waits for the processes carrying `id` to go; kills (SIGKILL) and returns those still there after the grace. */
async function leftovers(/** @type {string} */ id) {
  if (!canScan) return [];
  const deadline = Date.now() + LEFTOVER_GRACE_MS;
  let found = carrying(id);
  while (found.length > 0 && Date.now() < deadline) {
    await sleep(100);
    found = carrying(id);
  }
  for (const { pid } of found) signal(pid, 'SIGKILL');
  return found;
}

/**
 * Runs `command` with bash in the root, in a process group of its own, stdin /dev/null; resolves with its
 * exit, output, wall and CPU time, and whatever of it is still running afterwards.
 * @param {string} command
 */
async function runOnce(command) {
  const id = randomUUID();
  const cpuBefore = childrenCpuSeconds();
  const started = process.hrtime.bigint();
  const child = spawn('bash', ['-c', command], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, [TAG_VARIABLE]: id } });
  running = child;
  runningId = id;
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (text) => (stdout += text));
  child.stderr?.setEncoding('utf8').on('data', (text) => (stderr += text));
  const closed = new Promise((resolveClosed) => child.once('close', resolveClosed));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (child.pid !== undefined) signal(-child.pid, 'SIGKILL');
  }, RUN_TIMEOUT_MS);
  /** @type {{ code: number | null, signal: NodeJS.Signals | null }} */
  const exit = await new Promise((resolveExit, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signalName) => resolveExit({ code, signal: signalName }));
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  clearTimeout(timer);
  // The output is complete when the pipes close; a descendant left running may hold them open.
  const pipesClosed = await Promise.race([closed.then(() => true), sleep(LEFTOVER_GRACE_MS).then(() => false)]);
  const cpuAfter = childrenCpuSeconds();
  const left = await leftovers(id);
  if (child.pid !== undefined) signal(-child.pid, 'SIGKILL');
  running = undefined;
  runningId = undefined;
  return { exit, timedOut, seconds, cpu: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore, stdout, stderr, pipesClosed, left };
}

/** @param {Awaited<ReturnType<typeof runOnce>>} run */
function describeExit(run) {
  if (run.timedOut) return `killed after ${RUN_TIMEOUT_MS / 1000} s`;
  return run.exit.signal === null ? `exit ${run.exit.code}` : `killed by ${run.exit.signal}`;
}

/** @param {string} text */
const tail = (text) => text.trimEnd().split('\n').slice(-10).map((line) => `  | ${line}`).join('\n');

/** @param {Awaited<ReturnType<typeof runOnce>>} run @param {string} expected @param {string[]} problems @param {string} what */
function checkRun(run, expected, problems, what) {
  if (run.timedOut || run.exit.code !== 0) problems.push(`${what}: ${describeExit(run)}${run.stderr === '' ? '' : `, stderr:\n${tail(run.stderr)}`}`);
  if (run.stdout !== expected) problems.push(`${what}: printed ${JSON.stringify(run.stdout)}, not what \`uname -a\` prints (${JSON.stringify(expected)})`);
  if (run.left.length > 0) problems.push(`${what}: left running (killed now): ${run.left.map((p) => `${p.pid} ${p.cmdline}`).join('; ')}`);
  if (!run.pipesClosed) problems.push(`${what}: its stdout/stderr stayed open ${LEFTOVER_GRACE_MS / 1000} s after it exited`);
}

/** Removes lines a killed earlier check appended to the build. */
function removeStaleMarkers() {
  for (const file of MARKED) {
    const path = join(root, file);
    if (!existsSync(path)) continue;
    const text = readFileSync(path, 'utf8');
    if (!text.includes(APPENDED_TAG)) continue;
    writeFileSync(path, text.replace(APPENDED_LINE, ''));
    console.log(`check-first-command: removed a marker an interrupted earlier check left in ${file}`);
  }
}

for (const [name, number] of /** @type {const} */ ([['SIGINT', 2], ['SIGTERM', 15], ['SIGHUP', 1]])) {
  process.once(name, () => {
    restoreBuild();
    if (running?.pid !== undefined) signal(-running.pid, 'SIGTERM');
    const id = runningId;
    console.error(`check-first-command: ${name}: the build is restored`);
    void (id === undefined ? Promise.resolve([]) : leftovers(id)).finally(() => process.exit(128 + number));
  });
}

async function check() {
  const { line, command, shown } = firstCommand();
  console.log(`check-first-command: README.md line ${line}, without its npm ci: ${shown}`);
  if (!canScan) console.log('check-first-command: no /proc here: processes left running are not looked for, CPU not measured');
  for (const file of MARKED) if (!existsSync(join(root, file))) fail(`${file} is missing: run \`npm run build\` (or \`npm ci\`) first`);
  removeStaleMarkers();
  const expected = execFileSync('uname', ['-a'], { encoding: 'utf8' });
  /** @type {string[]} */
  const problems = [];

  const first = await runOnce(command);
  checkRun(first, expected, problems, 'the first command');
  const cpu = first.cpu === undefined ? '' : `, ${first.cpu.toFixed(2)} s CPU`;
  console.log(`first command: ${first.seconds.toFixed(2)} s wall${cpu} (limit ${LIMIT_S} s), ${describeExit(first)}, printed what uname -a prints: ${first.stdout === expected ? 'yes' : 'no'}`);
  if (first.seconds >= LIMIT_S) problems.push(`the first command took ${first.seconds.toFixed(2)} s, over the ${LIMIT_S} s limit`);

  const markers = MARKED.map((file) => ({ file, marker: `check-first-command marker ${randomUUID()}` }));
  let second;
  try {
    for (const { file, marker } of markers) {
      const path = join(root, file);
      const bytes = readFileSync(path);
      originals.set(path, bytes);
      writeFileSync(path, `${bytes.toString('utf8')}\n;process.stderr.write(${JSON.stringify(`${marker}\n`)}); ${APPENDED_TAG}\n`);
    }
    second = await runOnce(command);
  } finally {
    restoreBuild();
  }
  const printed = markers.filter(({ marker }) => second.stderr.split('\n').includes(marker));
  checkRun({ ...second, stderr: markers.reduce((text, { marker }) => text.split(`${marker}\n`).join(''), second.stderr) }, expected, problems, 'the command after the build changed');
  const current = printed.length === markers.length;
  if (!current) problems.push(`after the build changed, the same command did not run it: ${markers.filter((m) => !printed.includes(m)).map((m) => m.file).join(' and ')} not loaded (no marker on stderr)`);
  console.log(`ran the current build: ${current ? 'yes' : 'no'} (${printed.length} of ${markers.length} fresh markers printed: ${MARKED.join(', ')}), ${second.seconds.toFixed(2)} s wall, ${describeExit(second)}`);
  if (canScan) console.log(`left running after the two runs: ${first.left.length + second.left.length === 0 ? 'nothing' : `${first.left.length + second.left.length} process(es)`}`);

  for (const file of MARKED) if (readFileSync(join(root, file), 'utf8').includes(APPENDED_TAG)) problems.push(`${file} still holds a marker after the restore`);
  return problems;
}

try {
  const problems = await check();
  if (problems.length > 0) {
    for (const problem of problems) console.error(`check-first-command: FAILED: ${problem}`);
    process.exitCode = 1;
  } else {
    console.log('check-first-command: ok');
  }
} catch (error) {
  restoreBuild();
  console.error(`check-first-command: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
