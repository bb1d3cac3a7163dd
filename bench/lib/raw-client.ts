/**
 * The raw baseline: a hand-written `ws` consumer of the exec-server protocol that does only what the
 * protocol needs — JSON.parse of each frame, base64 decoding of each chunk, a Map from request id to
 * its waiter and from processId to its handlers — and nothing else (no validation, no reordering, no
 * history, no RxJS). Same protocol work as exec-rx: initialize, initialized, process/start, then the
 * notifications until `process/closed`; with the same ack-pong as exec-rx when `ackPong` is set.
 */
import WebSocket from 'ws';
import type { RawData } from 'ws';

/** What a raw process run hears. */
export interface RawProcessHandlers {
  output?(chunk: Buffer, seq: number, stream: string): void;
  exited?(exitCode: number, seq: number): void;
  closed(seq: number): void;
}

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

const OPEN = 1;

export class RawClient {
  private nextId = 1;
  private readonly pending = new Map<number, Waiter>();
  private readonly processes = new Map<string, RawProcessHandlers>();
  private pongScheduled: NodeJS.Immediate | undefined;
  private closedError: Error | undefined;

  private constructor(
    private readonly socket: WebSocket,
    private readonly ackPong: boolean,
  ) {
    socket.on('message', this.onMessage);
    socket.on('close', () => {
      this.closedError = new Error('raw socket closed');
      if (this.pongScheduled !== undefined) clearImmediate(this.pongScheduled);
      for (const waiter of this.pending.values()) waiter.reject(this.closedError);
      this.pending.clear();
    });
    socket.on('error', () => undefined);
  }

  /** Dials a listening executor (or a peer) and runs the handshake. */
  static async dial(url: string, options: { readonly ackPong: boolean }): Promise<RawClient> {
    const socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return RawClient.adopt(socket, options);
  }

  /** Takes an accepted socket (direct mode: the executor dialled in) and runs the handshake. */
  static async adopt(socket: WebSocket, options: { readonly ackPong: boolean }): Promise<RawClient> {
    const client = new RawClient(socket, options.ackPong);
    await client.request('initialize', { clientName: 'bench-raw' });
    client.socket.send('{"method":"initialized","params":{}}');
    return client;
  }

  request(method: string, params?: unknown): Promise<unknown> {
    if (this.closedError !== undefined) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify(params === undefined ? { id, method } : { id, method, params }));
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

  /** Stops reading the socket (ws `pause()`): the executor's writes back up behind it (backpressure). */
  pause(): void {
    this.socket.pause();
  }

  /** Reads the socket again after {@link pause}. */
  resume(): void {
    this.socket.resume();
  }

  close(): void {
    this.socket.terminate();
  }

  private readonly sendAckPong = (): void => {
    this.pongScheduled = undefined;
    if (this.socket.readyState === OPEN) this.socket.pong();
  };

  private readonly onMessage = (data: RawData): void => {
    if (this.ackPong && this.pongScheduled === undefined) this.pongScheduled = setImmediate(this.sendAckPong);
    const message = JSON.parse(data.toString()) as Message;
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
  };
}
