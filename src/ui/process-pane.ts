/**
 * The selected process: its actions (Interrupt, Terminate, Release: operate tokens only), Download output,
 * Follow and Timestamps, the search ("Search", "Previous match", "Next match", "n of m"), the stdin line
 * box of a pipeStdin process (operate only) and the terminal.
 */
import type { ProcessResource } from '../client';
import { checkbox, h, labelled, setText } from './dom';
import { argvText } from './processes-view';
import type { TerminalView } from './terminal-view';

/** What the pane's controls do. */
export interface PaneActions {
  interrupt(process: ProcessResource): Promise<void>;
  terminate(process: ProcessResource): Promise<void>;
  release(process: ProcessResource): Promise<void>;
  download(process: ProcessResource): Promise<void>;
  sendLine(process: ProcessResource, line: string): Promise<void>;
  endInput(process: ProcessResource): Promise<void>;
  setFollow(follow: boolean): void;
  setTimestamps(on: boolean): void;
}

/** The pane of the selected process. */
export class ProcessPane {
  readonly element: HTMLElement;
  private readonly title = h('h2', { id: 'process-heading' }, 'No process selected');
  private readonly message = h('p', { class: 'error', role: 'alert' });
  private readonly count = h('span', { 'data-testid': 'search-count', class: 'count', 'aria-live': 'polite' }, '0 of 0');
  private readonly buttons: {
    readonly interrupt?: HTMLButtonElement;
    readonly terminate?: HTMLButtonElement;
    readonly release?: HTMLButtonElement;
    readonly download: HTMLButtonElement;
  };
  private readonly stdin: { readonly form: HTMLFormElement; readonly input: HTMLInputElement; readonly send: HTMLButtonElement; readonly end: HTMLButtonElement } | undefined;
  private process: ProcessResource | undefined;

  constructor(
    terminal: TerminalView,
    private readonly actions: PaneActions,
    operate: boolean,
  ) {
    const act = (label: string, run: (process: ProcessResource) => Promise<void>): HTMLButtonElement =>
      h('button', { type: 'button', disabled: true, onclick: () => this.run(label, run) }, label);
    this.buttons = {
      ...(operate
        ? {
            interrupt: act('Interrupt', (p) => actions.interrupt(p)),
            terminate: act('Terminate', (p) => actions.terminate(p)),
            release: act('Release', (p) => actions.release(p)),
          }
        : {}),
      download: act('Download output', (p) => actions.download(p)),
    };
    const follow = checkbox('Follow', true, (on) => actions.setFollow(on));
    const timestamps = checkbox('Timestamps', false, (on) => actions.setTimestamps(on));
    const search = h('input', { type: 'text', spellcheck: 'false', autocomplete: 'off' });
    search.addEventListener('input', () => terminal.find(search.value));
    search.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') terminal.find(search.value, event.shiftKey);
    });
    terminal.onSearchResults((index, count) => setText(this.count, `${count === 0 ? 0 : index < 0 ? '?' : index + 1} of ${count}`));
    const previous = h('button', { type: 'button', onclick: () => terminal.find(search.value, true) }, 'Previous match');
    const next = h('button', { type: 'button', onclick: () => terminal.find(search.value) }, 'Next match');
    this.stdin = operate ? this.stdinForm() : undefined;
    this.element = h(
      'section',
      { class: 'panel pane', 'aria-labelledby': 'process-heading' },
      this.title,
      h(
        'div',
        { class: 'toolbar', role: 'toolbar', 'aria-label': 'Process actions' },
        this.buttons.interrupt,
        this.buttons.terminate,
        this.buttons.release,
        this.buttons.download,
        follow.element,
        timestamps.element,
      ),
      h('div', { class: 'toolbar search', role: 'search' }, labelled('Search', search, 'field inline'), previous, next, this.count),
      this.message,
      terminal.element,
      this.stdin?.form,
    );
  }

  /** Shows `process` (or none) and which actions it allows now. */
  show(process: ProcessResource | undefined): void {
    if (process?.id !== this.process?.id) setText(this.message, '');
    this.process = process;
    const heading = process === undefined ? 'No process selected' : argvText(process.argv);
    setText(this.title, heading);
    // At most two lines are shown (app.css): the whole argv is the heading's title too.
    if (this.title.title !== heading) this.title.title = heading;
    const running = process?.state === 'running';
    const ended = process !== undefined && !running && process.state !== 'exited';
    if (this.buttons.interrupt !== undefined) this.buttons.interrupt.disabled = !running;
    if (this.buttons.terminate !== undefined) this.buttons.terminate.disabled = !running;
    if (this.buttons.release !== undefined) this.buttons.release.disabled = !ended;
    this.buttons.download.disabled = process === undefined;
    if (this.stdin !== undefined) {
      this.stdin.form.hidden = process?.pipeStdin !== true;
      this.stdin.send.disabled = !running;
      this.stdin.end.disabled = !running;
    }
  }

  /** Shows a message (an action refused, the process failed). */
  say(text: string): void {
    setText(this.message, text);
  }

  private run(label: string, action: (process: ProcessResource) => Promise<void>): void {
    const process = this.process;
    if (process === undefined) return;
    setText(this.message, '');
    action(process).catch((error: unknown) => this.say(`${label} failed: ${error instanceof Error ? error.message : String(error)}`));
  }

  private stdinForm(): NonNullable<ProcessPane['stdin']> {
    const input = h('input', { type: 'text', spellcheck: 'false', autocomplete: 'off' });
    const send = h('button', { type: 'submit', disabled: true }, 'Send line');
    const end = h('button', { type: 'button', disabled: true }, 'End input');
    const form = h('form', { class: 'toolbar stdin', 'aria-label': 'Process input', hidden: true }, labelled('Standard input', input, 'field inline grow'), send, end);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const line = input.value;
      this.run('Send line', (p) => this.actions.sendLine(p, line).then(() => void (input.value = '')));
    });
    end.addEventListener('click', () => this.run('End input', (p) => this.actions.endInput(p)));
    return { form, input, send, end };
  }
}
