/**
 * The start form ("Start a process"): a command as a shell line (run by `/bin/sh -c`) or an argv (one
 * per line), a working directory, variables (`NAME=value` per line), TTY and Pipe stdin.
 */
import type { StartRequest } from '../client';
import { checkbox, h, labelled, uid } from './dom';

/** What the form's fields hold: the command (a shell line or an argv), the working directory, the variables, TTY and Pipe stdin. */
export interface StartFields {
  readonly command: string;
  readonly shell: boolean;
  readonly cwd: string;
  readonly env: string;
  readonly tty: boolean;
  readonly pipeStdin: boolean;
}

/** What the form's fields say, as a start request; throws an Error naming what is wrong. */
export function startRequestOf(fields: StartFields, size: { rows: number; cols: number } | undefined): StartRequest {
  const argv = fields.shell ? ['/bin/sh', '-c', fields.command] : fields.command.split('\n').filter((line) => line !== '');
  if ((fields.shell ? fields.command.trim() : argv.join('')) === '') throw new Error('enter a command');
  const env: Record<string, string> = {};
  for (const line of fields.env.split('\n')) {
    if (line.trim() === '') continue;
    const at = line.indexOf('=');
    if (at <= 0) throw new Error(`not NAME=value: ${line}`);
    env[line.slice(0, at)] = line.slice(at + 1);
  }
  return {
    argv,
    ...(fields.cwd.trim() === '' ? {} : { cwd: fields.cwd.trim() }),
    ...(Object.keys(env).length === 0 ? {} : { env }),
    ...(fields.tty ? { tty: size ?? true } : {}),
    ...(fields.pipeStdin ? { pipeStdin: true } : {}),
  };
}

/** The form; `start` gets the request and resolves once the process started (or rejects with why not). */
export function startForm(start: (request: StartRequest) => Promise<void>, terminalSize: () => { rows: number; cols: number } | undefined): HTMLFormElement {
  const command = h('textarea', { name: 'command', rows: '2', spellcheck: 'false', autocomplete: 'off' });
  const group = uid('mode');
  const shell = h('input', { type: 'radio', name: group, id: uid('r'), checked: true, value: 'shell' });
  const argvMode = h('input', { type: 'radio', name: group, id: uid('r'), value: 'argv' });
  const cwd = h('input', { type: 'text', name: 'cwd', spellcheck: 'false', autocomplete: 'off' });
  const env = h('textarea', { name: 'env', rows: '2', spellcheck: 'false', autocomplete: 'off' });
  const tty = checkbox('TTY', false);
  const pipeStdin = checkbox('Pipe stdin', false);
  const button = h('button', { type: 'submit' }, 'Start');
  const message = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    { 'aria-label': 'Start a process', class: 'panel start' },
    h('h2', {}, 'Start a process'),
    labelled('Command', command),
    h(
      'fieldset',
      { class: 'mode' },
      h('legend', {}, 'Command is'),
      h('span', { class: 'check' }, shell, h('label', { for: shell.id }, 'Shell line')),
      h('span', { class: 'check' }, argvMode, h('label', { for: argvMode.id }, 'Argv (one per line)')),
    ),
    labelled('Working directory', cwd),
    labelled('Environment (NAME=value per line)', env),
    h('div', { class: 'checks' }, tty.element, pipeStdin.element),
    button,
    message,
  );
  command.addEventListener('keydown', (event) => {
    // A shell line is one line: Enter starts it (Shift+Enter still breaks the line).
    if (event.key === 'Enter' && !event.shiftKey && shell.checked) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    message.textContent = '';
    let request: StartRequest;
    try {
      const fields = { command: command.value, shell: shell.checked, cwd: cwd.value, env: env.value, tty: tty.input.checked, pipeStdin: pipeStdin.input.checked };
      request = startRequestOf(fields, terminalSize());
    } catch (error: unknown) {
      message.textContent = error instanceof Error ? error.message : String(error);
      return;
    }
    button.disabled = true;
    start(request).then(
      () => {
        button.disabled = false;
      },
      (error: unknown) => {
        button.disabled = false;
        message.textContent = `Start failed: ${error instanceof Error ? error.message : String(error)}`;
      },
    );
  });
  return form;
}
