/**
 * The exit statuses of every `exec-rx` command, in one place: a command's own exit code passes through
 * as it is; these are what exec-rx itself answers with.
 */

/**
 * `host`, `ls` or `logs` failed (a bad configuration, a host that refused or cannot be reached), or an
 * error no command answered itself reached `main`: one line on stderr says why.
 */
export const EXIT_ERROR = 1;
/** The command line could not be parsed (the usage text follows the message). */
export const EXIT_USAGE = 2;
/** The program is not executable (as a shell). */
export const EXIT_NOT_EXECUTABLE = 126;
/** The program is missing (as a shell). */
export const EXIT_NOT_FOUND = 127;
/** Our stdout or stderr reader went away (128 + SIGPIPE). */
export const EXIT_BROKEN_PIPE = 141;
/** exec-rx itself failed: no executor or host, a lost connection, a failed process. */
export const EXIT_FAILED = 255;
/**
 * The command ran to its end but some of its output was not written: the host (or the executor) no
 * longer held it when it was to be written (a reader slower than the command, a bounded history). The
 * last stderr line names the command's own exit code and what was lost. 254: no shell status (126,
 * 127, 128+n for the 64 signals: up to 192), none of exec-rx's others, and far from the small codes
 * commands give themselves (1, 2, 3…), so `$?` never reads as the command's own answer; beside 255, it
 * reads as exec-rx's own.
 */
export const EXIT_OUTPUT_LOST = 254;
/**
 * `cp` copied some files and not others (a line on stderr for each one not copied, and a last line
 * counting them): rsync's "partial transfer" status, never a shell status or another of exec-rx's.
 */
export const EXIT_PARTIAL = 23;
