import { randomUUID } from 'node:crypto';
import { firstValueFrom } from 'rxjs';
import { ProcessFailedError, RequestTimeoutError, RpcError, TransportClosedError } from '../errors';
import { abortable, whileNotAborted } from '../rpc/abort';
import type { RpcConnection } from '../rpc/rpc-connection';
import type { ExecSession } from '../session/exec-session';
import { toFileUri } from '../wire/file-uri';
import type { EnvironmentInfo } from '../wire/environment';
import type { ExecParams, ExecResponse } from '../wire/process';
import type { AdoptedCounters, ProcessStreamOptions } from './process-stream-options';
import { ExecProcess } from './exec-process';
import type { ProcessTable } from './process-table';
import type { HistoryLaunch } from './output-history';
import type { SendParams, StartedProcess, StartOptions, StartParams } from './start-params';
import { startWithStdinFifo } from './stdin-fifo';
import { executorTempDir } from './temp-dir';
import { checkTtySize } from './tty-size';
import type { TtyHost } from './tty-wrapper';
import { resumeSizedTty, startSizedTty } from './tty-wrapper';

export type { StartedProcess, StartOptions, StartParams } from './start-params';

/** Why `stdin: 'fifo'` runs a command without stdin on Windows. */
const NO_FIFO_ON_WINDOWS = 'a Windows executor has no sh and mkfifo for a stdin FIFO: the command runs without stdin';

/** Starts processes on one environment (codex `ExecBackend`). */
export class ExecBackend {
  /** Helper work left running after a sized tty ended (removing its recorded pty path). */
  private readonly chores = new Set<Promise<void>>();
  /** What the sized tty and the stdin FIFO start their wrapper and helpers with: the raw send, never `start` again. */
  private readonly wrappers: TtyHost = { send: (params, options) => this.send(params, options), track: (chore) => this.track(chore) };

  /**
   * @internal Built by its Environment, which owns the session and the process list; `info` gives the
   * environment info (temp dir, platform) a sized tty start and a stdin FIFO need.
   */
  constructor(
    private readonly client: ExecSession,
    private readonly streamOptions: () => ProcessStreamOptions,
    private readonly table: ProcessTable,
    private readonly info: () => Promise<EnvironmentInfo> = () => firstValueFrom(client.call('environment/info', undefined)),
  ) {}

  /**
   * Starts a process. Its notification route is registered before `process/start` is sent, so no output
   * is missed. Resolves once the executor spawned it; rejects with SpawnError (missing program ...),
   * RpcError, or TransportClosedError when the socket died before the reply: a start is never sent
   * twice, and the host then terminates that processId on the executor as soon as it can.
   * Once started, the process is listed in `Environment.processes$` (see {@link StartOptions}).
   * With `tty: { rows, cols }` it rejects first with InvalidTtySizeError for a bad size (nothing sent),
   * and resolves with `sized: false` and an `unsizedReason` when the executor cannot size a pty.
   * With `stdin: 'fifo'` (and no `tty`) it resolves with the command's `feeder`, which the caller
   * disposes; it rejects with CannotStartError for a missing or non-executable program and with
   * HelperFailedError when the FIFO cannot be made; on a Windows executor it resolves without a
   * feeder, with a `noStdinReason` (see {@link StartParams}).
   * `options.signal` cancels it: it then rejects with `signal.reason`; see {@link StartOptions.signal}
   * for what an abort leaves behind.
   */
  async start(params: StartParams, options: StartOptions = {}): Promise<StartedProcess> {
    const { tty } = params;
    if (typeof tty === 'object') checkTtySize(tty.rows, tty.cols);
    return whileNotAborted(options.signal, () => this.startChecked(params, options));
  }

  private async startChecked(params: StartParams, options: StartOptions): Promise<StartedProcess> {
    const { tty, stdin, ...rest } = params;
    if (typeof tty === 'object') {
      const size = checkTtySize(tty.rows, tty.cols);
      const info = await this.info().catch(() => undefined);
      return startSizedTty(this.wrappers, rest, size, options, info);
    }
    if (tty === true || stdin !== 'fifo') return this.send({ ...rest, tty: tty === true }, options);
    // Unknown info: tried as on any POSIX executor, in /tmp.
    const info = await this.info().catch(() => undefined);
    if (info?.platformOs === 'windows') return { ...(await this.send(rest, options)), noStdinReason: NO_FIFO_ON_WINDOWS };
    return startWithStdinFifo(this.wrappers.send, rest, executorTempDir(info), options);
  }

  /**
   * @internal One `process/start`, exactly as asked: no sizing wrapper, no FIFO. What {@link start}
   * sends for a plain start, and what the sized tty and the stdin FIFO send for their wrapper, the
   * command and each helper (never `start` again). Resolves and rejects as a plain {@link start}.
   */
  async send(params: SendParams, options: StartOptions = {}): Promise<StartedProcess> {
    const signal = options.signal;
    if (signal?.aborted === true) throw signal.reason;
    const processId = params.processId ?? randomUUID();
    const tty = params.tty === true;
    const wire: ExecParams = { ...params, processId, cwd: toFileUri(params.cwd), env: { ...params.env }, tty };
    const table = this.table;
    // The list itself hears the process: no closure (whose context would keep this call's locals).
    const launch = options.unlisted === true ? undefined : { argv: options.listedArgv ?? params.argv, tty };
    const process = new ExecProcess(processId, this.client, { ...this.streamOptions(), listener: table }, undefined, launch);
    let route: { unsubscribe(): void } | undefined;
    let sent = false;
    try {
      // A history kept on disk names the process there first: a host that crashes after the send finds it.
      const ready = process.historyReady();
      if (ready !== undefined) await whileNotAborted(signal, () => ready);
      const live = this.client.liveRpc();
      const call = signal === undefined ? {} : { signal };
      const startOn = (rpc: RpcConnection): Promise<ExecResponse> => {
        route = process.inbox.bind(rpc);
        // An aborted signal is refused by the call itself, before anything is sent.
        sent = signal?.aborted !== true;
        return rpc.call('process/start', wire, call);
      };
      const response = await (live === undefined ? firstValueFrom(this.client.connection().pipe(abortable(signal))).then(startOn) : startOn(live));
      // A short process may have closed before its start reply arrived (the executor sends its
      // notifications first): then there is nothing left to carry across reconnects.
      if (process.state !== 'closed' && process.state !== 'failed') this.client.addProcess(process.inbox, route);
      if (options.unlisted !== true) table.add(process, options.listedArgv ?? params.argv, tty, options.onDelisted);
      return { process, sandboxType: response.sandboxType, sized: false };
    } catch (error: unknown) {
      route?.unsubscribe();
      // Refused (never sent, or the executor's error answer): the process never ran, and a store that keeps
      // histories keeps nothing of it (a `running` record would stand for a process nobody has). Sent and not
      // answered (the socket lost before the reply, aborted or timed out once sent): it may have begun with
      // nobody to follow it; its history ends once the executor terminated it (see cleanUpAmbiguousStart).
      if (!sent || error instanceof RpcError) process.discard();
      else this.cleanUpAmbiguousStart(process, error);
      throw error;
    }
  }

  /**
   * @internal Makes the process of an adopted record (`EnvironmentManager.adoptAcceptedWebsocket`) and
   * registers it with the session before the takeover handshake, so its notifications are routed from
   * the start. Its history comes from the same factory as a started process's; it is not listed yet.
   */
  adopt(processId: string, counters: AdoptedCounters, launch?: HistoryLaunch): ExecProcess {
    const process = new ExecProcess(processId, this.client, { ...this.streamOptions(), listener: this.table }, counters, launch);
    this.client.addProcess(process.inbox);
    return process;
  }

  /**
   * @internal Makes an adopted sized tty resizable again, from the pty path file its wrapper recorded
   * (`StartedProcess.ttyPathFile`, which the host persisted); see `resumeSizedTty`.
   */
  resumeSizedTty(process: ExecProcess, ttyPathFile: string): void {
    resumeSizedTty(this.wrappers, process, ttyPathFile, () => this.info());
  }

  /** @internal Lists an adopted process in `Environment.processes$`, as a started one is listed. */
  list(process: ExecProcess, argv: readonly string[], tty: boolean): void {
    this.table.add(process, argv, tty);
  }

  /**
   * Resolves once the helper processes still running after their sized tty ended (each removes the pty
   * path it recorded in the executor's temp dir) have finished, those that start meanwhile included.
   * Never rejects. `EnvironmentManager.close` waits for it (bounded); await it before closing a connection
   * some other way right after a sized tty ended, or its temp file may stay behind.
   */
  async idle(): Promise<void> {
    while (this.chores.size > 0) await Promise.all([...this.chores]);
  }

  private track(chore: Promise<void>): void {
    this.chores.add(chore);
    void chore.then(() => this.chores.delete(chore));
  }

  /**
   * The start may have happened (`why` it is not known): terminate that id once connected again
   * (terminate is safe to repeat), then end its history saying so (`failed`, with a TransportClosedError
   * as the cause: a store keeps it as lost, with why) and let go of it; the same at once when the executor
   * answers that it has no such process (the start never reached it). When the session ends first (its
   * host let go of it, or stops), the history stays as it is: whoever takes the session back finds the
   * process in it, takes it back if it runs, and says it was lost if it never did.
   */
  private cleanUpAmbiguousStart(process: ExecProcess, why: unknown): void {
    const id = process.processId;
    const end = (what: string): void => {
      const cause = why instanceof TransportClosedError ? why : new TransportClosedError('local', 1006, ambiguousReason(why));
      process.inbox.fail(new ProcessFailedError(id, `process ${id}: its start was not answered (${cause.message}); ${what}`, { cause }));
      process.release();
    };
    this.client.call('process/terminate', { processId: id }).subscribe({
      next: () => end('it was terminated once connected again, if it had begun'),
      error: (error: unknown) => (error instanceof RpcError ? end('the executor has no such process: it never began') : undefined),
    });
  }
}

/** Why a start sent and not answered may have begun, when the socket was not lost: aborted, or its answer late. */
function ambiguousReason(why: unknown): string {
  if (why instanceof RequestTimeoutError) return `the start was not answered in time (${why.message})`;
  return 'the start was aborted once sent';
}
