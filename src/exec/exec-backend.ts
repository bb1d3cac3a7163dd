import { randomUUID } from 'node:crypto';
import { firstValueFrom } from 'rxjs';
import { TransportClosedError } from '../errors';
import type { RpcConnection } from '../rpc/rpc-connection';
import type { ExecSession } from '../session/exec-session';
import { toFileUri } from '../wire/file-uri';
import type { ExecParams, ExecResponse } from '../wire/process';
import type { ProcessStreamOptions } from './exec-process';
import { ExecProcess } from './exec-process';
import type { ProcessTable } from './process-table';

/**
 * What `start` takes: the wire's ExecParams, with conveniences. `processId` is generated when absent (an
 * id stays reserved on the executor for 80 s after its process closes); `cwd` may be a native absolute
 * path or a `file://` URI; `env` defaults to `{}` (an empty environment), `tty` to false.
 */
export type StartParams = Omit<ExecParams, 'processId' | 'cwd' | 'env' | 'tty'> & {
  /** Our key for the process (unique in the session, reserved for 80 s after it closes). @default a random UUID */
  readonly processId?: string;
  /** The working directory: a native absolute path or a `file://` URI. */
  readonly cwd: string;
  /** The child's exact environment (or what is overlaid on `envPolicy`'s base). @default `{}`: empty */
  readonly env?: Readonly<Record<string, string>>;
  /** Run in a pseudo-terminal (output as stream `pty`; a tty spawn needs `PATH` in `env`). @default false */
  readonly tty?: boolean;
};

/** How a started process appears in its environment's process list (`Environment.processes$`). */
export interface StartOptions {
  /**
   * Leave it off the list (a helper process of a wrapper, such as the stdin FIFO's). Its history is
   * still kept, and released like any other when it is.
   * @default false
   */
  readonly unlisted?: boolean;
  /** The argv to list, when the command is started through a wrapper. @default params.argv */
  readonly listedArgv?: readonly string[];
}

/** What `start` resolves with. */
export interface StartedProcess {
  /** The running process: its events, output views, stdin and signals. */
  readonly process: ExecProcess;
  /**
   * The sandbox it runs in: `none`, `macosSeatbelt`, `linuxSeccomp`, `windowsRestrictedToken` or
   * `windowsMxc`; `undefined` from a legacy executor.
   */
  readonly sandboxType: ExecResponse['sandboxType'];
}

/** Starts processes on one environment (codex `ExecBackend`). */
export class ExecBackend {
  /** @internal Built by its Environment, which owns the session and the process list. */
  constructor(
    private readonly client: ExecSession,
    private readonly streamOptions: () => ProcessStreamOptions,
    private readonly table: ProcessTable,
  ) {}

  /**
   * Starts a process. Its notification route is registered before `process/start` is sent, so no output
   * is missed. Resolves once the executor spawned it; rejects with SpawnError (missing program ...),
   * RpcError, or TransportClosedError when the socket died before the reply: a start is never sent
   * twice, and the host then terminates that processId on the executor as soon as it can.
   * Once started, the process is listed in `Environment.processes$` (see {@link StartOptions}).
   */
  async start(params: StartParams, options: StartOptions = {}): Promise<StartedProcess> {
    const processId = params.processId ?? randomUUID();
    const tty = params.tty ?? false;
    const wire: ExecParams = { ...params, processId, cwd: toFileUri(params.cwd), env: { ...params.env }, tty };
    const table = this.table;
    const process = new ExecProcess(processId, this.client, this.streamOptions(), () => table.released(processId), () => table.changed(processId));
    let route: { unsubscribe(): void } | undefined;
    try {
      const live = this.client.liveRpc();
      const startOn = (rpc: RpcConnection): Promise<ExecResponse> => {
        route = process.inbox.bind(rpc);
        return rpc.call('process/start', wire);
      };
      const response = await (live === undefined ? firstValueFrom(this.client.connection()).then(startOn) : startOn(live));
      // A short process may have closed before its start reply arrived (the executor sends its
      // notifications first): then there is nothing left to carry across reconnects.
      if (process.state !== 'closed' && process.state !== 'failed') this.client.addProcess(process.inbox, route);
      if (options.unlisted !== true) table.add(process, options.listedArgv ?? params.argv, tty);
      return { process, sandboxType: response.sandboxType };
    } catch (error: unknown) {
      route?.unsubscribe();
      if (error instanceof TransportClosedError) this.cleanUpAmbiguousStart(processId);
      throw error;
    }
  }

  /** The start may have happened: terminate that id once connected again (terminate is safe to repeat). */
  private cleanUpAmbiguousStart(processId: string): void {
    this.client.call('process/terminate', { processId }).subscribe({ error: () => undefined });
  }
}
