/**
 * The raw stdio baseline: a hand-written consumer of `codex exec-server --listen stdio` that does only
 * what the protocol needs — split the child's stdout into lines on the bytes (newline-delimited JSON),
 * decode each line once, JSON.parse it, base64-decode each chunk, a Map from request id to its waiter and
 * from processId to its handlers — and nothing else (no validation, no reordering, no history, no RxJS,
 * no flow control). Same protocol work as exec-rx over stdio: initialize, initialized, process/start,
 * then the notifications until `process/closed`. It tells what the executor's stdio transport gives
 * when the client takes every byte as it comes.
 */
import type { Readable, Writable } from 'node:stream';
import { spawnExecutor } from '../../src/executor/spawn-executor';
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';
import { trackCloser } from './executors';
import type { RawProcessHandlers } from './raw-client';

interface Waiter {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

interface Message {
  readonly id?: number;
  readonly method?: string;
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string };
  readonly params?: {
    readonly processId: string;
    readonly seq: number;
    readonly stream?: string;
    readonly chunk?: string;
    readonly exitCode?: number;
  };
}

const NEWLINE = 0x0a;

export class RawStdioClient {
  private nextId = 1;
  private readonly pending = new Map<number, Waiter>();
  private readonly processes = new Map<string, RawProcessHandlers>();
  /** Bytes of a line that began in an earlier chunk (empty when the last chunk ended with a newline). */
  private partial: Buffer[] = [];
  private closedError: Error | undefined;

  private constructor(
    private readonly executor: SpawnedExecutor,
    private readonly input: Readable,
    private readonly output: Writable,
  ) {
    input.on('data', this.onData);
    input.on('close', () => {
      this.closedError = new Error('raw stdio closed');
      for (const waiter of this.pending.values()) waiter.reject(this.closedError);
      this.pending.clear();
    });
  }

  /** Spawns a stdio executor (stopped by `close()`, or by the bench's `stopEverything`) and runs the handshake. */
  static async spawn(): Promise<RawStdioClient> {
    const executor = await spawnExecutor({ mode: 'stdio' });
    trackCloser({ close: () => executor.stop() });
    if (executor.stdin === undefined || executor.stdout === undefined) {
      await executor.stop();
      throw new Error('stdio executor has no pipes');
    }
    const client = new RawStdioClient(executor, executor.stdout, executor.stdin);
    await client.request('initialize', { clientName: 'bench-raw-stdio' });
    client.output.write('{"method":"initialized","params":{}}\n');
    return client;
  }

  request(method: string, params?: unknown): Promise<unknown> {
    if (this.closedError !== undefined) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.output.write(`${JSON.stringify(params === undefined ? { id, method } : { id, method, params })}\n`);
    });
  }

  /** Registers the handlers, then sends `process/start`; resolves with its result. */
  start(processId: string, argv: readonly string[], handlers: RawProcessHandlers): Promise<unknown> {
    this.processes.set(processId, handlers);
    return this.request('process/start', { processId, argv, cwd: 'file:///tmp', env: { PATH: '/usr/bin:/bin' }, tty: false }).catch((error: unknown) => {
      this.processes.delete(processId);
      throw error;
    });
  }

  /** The executor's pid. */
  get pid(): number {
    return this.executor.pid;
  }

  /** Ends the executor (stdin EOF) and waits for it to exit. */
  close(): Promise<void> {
    return this.executor.stop();
  }

  private readonly onData = (data: Buffer): void => {
    let start = 0;
    for (let nl = data.indexOf(NEWLINE); nl !== -1; nl = data.indexOf(NEWLINE, start)) {
      if (this.partial.length === 0) this.onLine(data.toString('utf8', start, nl));
      else {
        this.partial.push(data.subarray(0, nl));
        this.onLine(Buffer.concat(this.partial).toString('utf8'));
        this.partial = [];
      }
      start = nl + 1;
    }
    if (start < data.length) this.partial.push(data.subarray(start));
  };

  private onLine(line: string): void {
    if (line.length === 0) return;
    const message = JSON.parse(line) as Message;
    if (message.id !== undefined) {
      const waiter = this.pending.get(message.id);
      if (waiter === undefined) return;
      this.pending.delete(message.id);
      if (message.error !== undefined) waiter.reject(new Error(`${message.error.code}: ${message.error.message}`));
      else waiter.resolve(message.result);
      return;
    }
    const params = message.params;
    if (params === undefined) return;
    const handlers = this.processes.get(params.processId);
    if (handlers === undefined) return;
    switch (message.method) {
      case 'process/output':
        handlers.output?.(Buffer.from(params.chunk ?? '', 'base64'), params.seq, params.stream ?? 'stdout');
        return;
      case 'process/exited':
        handlers.exited?.(params.exitCode ?? -1, params.seq);
        return;
      case 'process/closed':
        this.processes.delete(params.processId);
        handlers.closed(params.seq);
        return;
      case undefined:
      default:
        return;
    }
  }
}
