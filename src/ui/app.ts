/**
 * The dashboard: one `watch$` subscription per tab carries the overview and the selected process's
 * events (switchMap over what is asked: a selection, a resume after a seq, or the overview alone while
 * the terminal catches up). Everything else is plain calls on the client.
 */
import type { Subscription } from 'rxjs';
import { BehaviorSubject, Subject, asyncScheduler, concatMap, defer, interval, retry, switchMap, throwError, timer } from 'rxjs';
import type { EnvironmentOverview, PreviewLink, ProcessResource, StartRequest } from '../client';
import { HostApiError } from '../client';
import { HostBanner } from './banner';
import { h } from './dom';
import { EnvironmentsView } from './environments-view';
import { FilesView } from './files-view';
import { FlowGate } from './flow-gate';
import type { HostClient, HostInfo, WatchEvent, WatchSelection } from '../client';
import { ProcessPane } from './process-pane';
import { ProcessesView } from './processes-view';
import { previewForm } from './preview-form';
import { startForm } from './start-form';
import { installTestHook } from './test-hook';
import { TerminalView } from './terminal-view';
import { viewTabs } from './view-tabs';

/** How long the page waits before it subscribes again after the client gave up on the host. */
const RESUBSCRIBE_MS = 5000;

/** Why the page stops: the host refused the token (401), or refused the page something (403). */
export type Refusal = { readonly kind: 'unauthorized' } | { readonly kind: 'forbidden'; readonly message: string };

/** The running page. */
export class App {
  private readonly banner = new HostBanner();
  private readonly environments: EnvironmentsView;
  private readonly processes: ProcessesView;
  private readonly terminal = new TerminalView();
  private readonly pane: ProcessPane;
  private readonly gate: FlowGate;
  private readonly operate: boolean;
  /** The Files tab's view (operate tokens only: the file routes refuse `view`). */
  private readonly files: FilesView | undefined;
  /** What the one connection carries besides the overview. */
  private readonly asked$ = new BehaviorSubject<WatchSelection | undefined>(undefined);
  private readonly subscriptions: Subscription[] = [];
  private overview: readonly EnvironmentOverview[] = [];
  private environmentId: string | undefined;
  private selected: ProcessResource | undefined;
  /** The last seq of the selected process handed to the terminal. */
  private lastSeq = 0;
  private exitCode: number | undefined;

  constructor(
    private readonly client: HostClient,
    info: HostInfo,
    private readonly refused: (refusal: Refusal) => void,
  ) {
    this.operate = info.caller.role === 'operate';
    this.files = this.operate ? new FilesView() : undefined;
    this.banner.setHost(info.hostInstance);
    this.environments = new EnvironmentsView((id) => this.selectEnvironment(id));
    this.processes = new ProcessesView((process) => this.selectProcess(process));
    this.gate = new FlowGate(
      () => this.asked$.next(undefined),
      () => this.resume(),
    );
    this.pane = new ProcessPane(this.terminal, {
      interrupt: (p) => client.interrupt(p.environmentId, p.id),
      terminate: async (p) => void (await client.terminate(p.environmentId, p.id)),
      release: (p) => client.release(p.environmentId, p.id),
      download: async (p) => location.assign(await client.logUrl(p.environmentId, p.id)),
      sendLine: (p, line) => client.write(p.environmentId, p.id, `${line}\n`),
      endInput: (p) => client.endStdin(p.environmentId, p.id),
      setFollow: (on) => this.terminal.setFollow(on),
      setTimestamps: (on) => {
        this.terminal.setTimestamps(on);
        // The lines already shown get their times too: the process's output is asked again from its start.
        if (this.selected !== undefined) this.selectProcess(this.selected, true);
      },
    }, this.operate);
  }

  /** Builds the page into `root` and opens the connection. */
  mount(root: HTMLElement): void {
    const side = h(
      'div',
      { class: 'side' },
      this.environments.element,
      this.operate ? startForm((request) => this.start(request), () => this.terminal.size) : undefined,
      this.operate ? previewForm((port) => this.previewLink(port)) : undefined,
    );
    const processesTab = h('div', { class: 'tab-processes' }, this.processes.element, this.pane.element);
    const files = this.files;
    const panels = files === undefined ? [] : [{ label: 'Processes', panel: processesTab }, { label: 'Files', panel: files.element }];
    const tabs = files === undefined ? undefined : viewTabs(panels, (label) => files.setVisible(label === 'Files'));
    const content = h('div', { class: 'content' }, tabs, processesTab, files?.element);
    root.replaceChildren(h('header', { class: 'top' }, h('h1', {}, 'exec-rx host'), this.banner.element), h('main', { class: 'layout' }, side, content));
    this.terminal.open(this.gate, installTestHook(this.terminal.terminal));
    this.pane.show(undefined);
    this.subscriptions.push(
      this.asked$.pipe(switchMap((selection) => this.client.watch$(selection)), retry({ delay: (error: unknown) => this.retryDelay(error) })).subscribe({
        next: (event) => this.onEvent(event),
        error: (error: unknown) => this.fail(error),
      }),
      interval(1000).subscribe(() => this.processes.tick(asyncScheduler.now())),
    );
    if (files !== undefined) this.subscriptions.push(files.start());
    if (this.operate) this.wireInput();
  }

  /** Ends every subscription. */
  dispose(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }

  private onEvent(event: WatchEvent): void {
    switch (event.type) {
      case 'overview':
        return this.onOverview(event.environments);
      case 'connection':
        if (event.state === 'open') this.banner.open();
        else this.banner.reconnecting(event.reason);
        return;
      case 'output':
        this.lastSeq = event.seq;
        return this.terminal.output(event);
      case 'exited':
        this.lastSeq = event.seq;
        this.exitCode = event.exitCode;
        return;
      case 'closed':
        this.lastSeq = event.seq;
        return this.terminal.marker(this.exitCode === undefined ? 'closed' : `exited with code ${this.exitCode}`);
      case 'truncated':
        this.lastSeq = event.nextSeq - 1;
        return this.terminal.marker(`${event.droppedEvents} event(s) no longer held by the host${event.reason === undefined ? '' : ` (${event.reason})`}`);
      case 'processFailed':
        this.terminal.marker(`the process's output cannot be followed: ${event.message}`);
        return this.pane.say(`${event.code}: ${event.message}`);
    }
  }

  private onOverview(environments: readonly EnvironmentOverview[]): void {
    this.overview = environments;
    this.environments.update(environments);
    if (this.environmentId === undefined || !environments.some((e) => e.id === this.environmentId)) {
      const first = environments[0];
      if (first !== undefined) this.selectEnvironment(first.id);
      else this.processes.update([], asyncScheduler.now());
      return;
    }
    this.showProcesses();
  }

  private showProcesses(): void {
    const processes = this.overview.find((e) => e.id === this.environmentId)?.processes ?? [];
    this.processes.update(processes, asyncScheduler.now());
    if (this.selected === undefined) return;
    const current = processes.find((p) => p.id === this.selected?.id);
    if (current !== undefined) {
      this.selected = current;
      this.pane.show(current);
      this.terminal.setTakesInput(this.operate && current.tty && current.state === 'running');
    } else if (this.selected.environmentId === this.environmentId && this.overview.length > 0) {
      // Released (or gone): nothing is selected any more.
      this.clearSelection();
    }
  }

  private selectEnvironment(id: string): void {
    if (id === this.environmentId) return;
    this.environmentId = id;
    this.environments.setSelected(id);
    this.files?.setEnvironment(id, this.client.files(id));
    this.clearSelection();
    this.showProcesses();
  }

  private clearSelection(): void {
    this.selected = undefined;
    this.processes.setSelected(undefined);
    this.pane.show(undefined);
    this.terminal.reset(false);
    if (this.asked$.value !== undefined) this.asked$.next(undefined);
  }

  /** Shows `process` from its first event (`again`: the same one, asked again from the start). */
  private selectProcess(process: ProcessResource, again = false): void {
    if (!again && process.id === this.selected?.id) return;
    this.selected = process;
    this.lastSeq = 0;
    this.exitCode = undefined;
    this.processes.setSelected(process.id);
    this.pane.show(process);
    this.terminal.reset(process.tty);
    this.terminal.setTakesInput(this.operate && process.tty && process.state === 'running');
    this.gate.reset();
    this.asked$.next({ environmentId: process.environmentId, processId: process.id });
    if (process.tty && process.state === 'running' && this.operate) this.sendSize();
  }

  /** The terminal caught up: the process part comes back after the last seq it was handed. */
  private resume(): void {
    const process = this.selected;
    if (process !== undefined) this.asked$.next({ environmentId: process.environmentId, processId: process.id, afterSeq: this.lastSeq });
  }

  private async start(request: StartRequest): Promise<void> {
    const environmentId = this.environmentId;
    if (environmentId === undefined) throw new Error('no environment is selected');
    const process = await this.client.start(environmentId, request);
    this.selectProcess(process);
  }

  /** A signed link to `port`'s preview in the selected environment. */
  private async previewLink(port: number): Promise<PreviewLink> {
    const environmentId = this.environmentId;
    if (environmentId === undefined) throw new Error('no environment is selected');
    return this.client.http(environmentId).previewLink(port);
  }

  /** Typing into a tty process's terminal sends it, in order; its size follows the pane. */
  private wireInput(): void {
    const typed$ = new Subject<string>();
    this.terminal.terminal.onData((data) => typed$.next(data));
    this.subscriptions.push(
      typed$
        .pipe(
          concatMap((data) => {
            const process = this.selected;
            if (data === '' || process === undefined || !process.tty || process.state !== 'running') return [];
            return defer(() => this.client.write(process.environmentId, process.id, data).catch((error: unknown) => this.pane.say(`Input failed: ${String(error)}`)));
          }),
        )
        .subscribe(),
      this.terminal.resized$.subscribe(() => this.sendSize()),
    );
  }

  private sendSize(): void {
    const process = this.selected;
    if (process === undefined || !process.tty || process.state !== 'running') return;
    this.client.resize(process.environmentId, process.id, this.terminal.size).catch((error: unknown) => this.pane.say(`Resize failed: ${String(error)}`));
  }

  /** The client gave up on the host for a while: subscribe again later; a refusal ends the page. */
  private retryDelay(error: unknown) {
    if (error instanceof HostApiError && (error.status === 401 || error.status === 403)) return throwError(() => error);
    this.banner.reconnecting(error instanceof Error ? error.message : String(error));
    return timer(RESUBSCRIBE_MS);
  }

  private fail(error: unknown): void {
    this.dispose();
    if (error instanceof HostApiError && error.status === 401) this.refused({ kind: 'unauthorized' });
    else this.refused({ kind: 'forbidden', message: error instanceof Error ? error.message : String(error) });
  }
}
