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
