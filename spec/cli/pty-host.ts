/**
 * Runs a command on a real pty of a given size, as a terminal would: a small python3 `pty` host whose
 * stdout carries everything the command writes to the terminal and whose stdin takes commands:
 * `resize R C` (sets the pty's size, then sends the command SIGWINCH, as a terminal emulator does) and
 * `type HEX` (keys typed). It exits with the command's status once the command exited and the terminal
 * drained; SIGTERM to it is passed on to the command.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';

const HOST = `
import fcntl, os, select, signal, struct, subprocess, sys, termios
rows, cols = int(sys.argv[1]), int(sys.argv[2])
master, slave = os.openpty()
def set_size(r, c):
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack('HHHH', r, c, 0, 0))
set_size(rows, cols)
child = subprocess.Popen(sys.argv[3:], stdin=slave, stdout=slave, stderr=slave, close_fds=True, env=dict(os.environ, PATH=os.environ['EXEC_RX_PTY_PATH']))
os.close(slave)
signal.signal(signal.SIGTERM, lambda *_: child.terminate())
inputs, pending = [master, 0], b''
while True:
    ready = select.select(inputs, [], [])[0]
    if master in ready:
        try:
            data = os.read(master, 65536)
        except OSError:
            data = b''
        if not data:
            break
        os.write(1, data)
    if 0 in ready:
        data = os.read(0, 65536)
        if not data:
            inputs.remove(0)
        pending += data
        while b'\\n' in pending:
            line, pending = pending.split(b'\\n', 1)
            words = line.decode().split()
            if words[0] == 'resize':
                set_size(int(words[1]), int(words[2]))
                os.kill(child.pid, signal.SIGWINCH)
            elif words[0] == 'type':
                os.write(master, bytes.fromhex(words[1]))
code = child.wait()
sys.exit(code if code >= 0 else 128 - code)
`;

/** A command running on a pty. */
export interface PtyRun {
  readonly child: ChildProcessWithoutNullStreams;
  /** Everything written to the terminal so far. */
  output(): string;
  /** Resolves with the terminal's output once it contains `text` after `from` (an index in it); rejects if the command ended first. */
  waitFor(text: string, from?: number): Promise<string>;
  /** Sets the terminal's size and sends the command SIGWINCH. */
  resize(rows: number, cols: number): void;
  /** Types bytes on the terminal's keyboard. */
  type(bytes: string): void;
  /** Resolves with the host's exit status (the command's) once it ended. */
  readonly done: Promise<number | null>;
  /** Terminates the command (SIGTERM) if it still runs, and waits for the host to end (teardown). */
  stop(): Promise<void>;
}

/** Starts `argv` on a `rows` x `cols` pty, with our environment and `extraEnv`. */
export function startOnPty(rows: number, cols: number, argv: readonly string[], extraEnv: Readonly<Record<string, string>> = {}): PtyRun {
  // python3 may be a shim that changes PATH: the command gets ours.
  const env = { ...process.env, ...extraEnv, EXEC_RX_PTY_PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
  const child = spawn('python3', ['-c', HOST, String(rows), String(cols), ...argv], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let text = '';
  let errors = '';
  let closed = false;
  const waiters: (() => void)[] = [];
  const wake = (): void => waiters.splice(0).forEach((waiter) => waiter());
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
    wake();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
  const done = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      closed = true;
      wake();
      resolve(code);
    }),
  );
  return {
    child,
    output: () => text,
    waitFor: (wanted, from = 0) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (text.indexOf(wanted, from) >= 0) return resolve(text);
          if (closed) return reject(new Error(`ended without ${JSON.stringify(wanted)}: ${JSON.stringify(text)} ${errors}`));
          waiters.push(check);
        };
        check();
      }),
    resize: (r, c) => void child.stdin.write(`resize ${r} ${c}\n`),
    type: (bytes) => void child.stdin.write(`type ${Buffer.from(bytes).toString('hex')}\n`),
    done,
    stop: async () => {
      if (!closed) child.kill('SIGTERM');
      await done;
    },
  };
}
