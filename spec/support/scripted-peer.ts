import WebSocket from 'ws';

/** A JSON-RPC message as the scripted executor sees it. */
export type Json = Record<string, unknown>;

/**
 * The executor side of a socket, scripted by a spec: it dials the host's acceptor, reads the exact JSON
 * the host sends, and answers it (codex `WebSocketJsonRpcPeer`).
 */
export class ScriptedPeer {
  private readonly inbox: Json[] = [];
  private readonly waiters: { resolve: (m: Json) => void; reject: (e: Error) => void }[] = [];
  private closedFlag = false;
  /** Resolves when the host closes this socket (or it drops). */
  readonly closed: Promise<void>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      const message = JSON.parse(String(data)) as Json;
      const waiter = this.waiters.shift();
      if (waiter === undefined) this.inbox.push(message);
      else waiter.resolve(message);
    });
    this.closed = new Promise((resolve) => {
      socket.on('close', () => {
        this.closedFlag = true;
        for (const waiter of this.waiters.splice(0)) waiter.reject(new Error('socket closed while waiting for a message'));
        resolve();
      });
    });
    socket.on('error', () => undefined);
  }

  static async dial(url: string): Promise<ScriptedPeer> {
    const socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return new ScriptedPeer(socket);
  }

  get isClosed(): boolean {
    return this.closedFlag;
  }

  /** The next message the host sent. */
  receive(): Promise<Json> {
    const queued = this.inbox.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.closedFlag) return Promise.reject(new Error('socket closed'));
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Receives the next message and checks it is a request for `method`; returns it. */
  async expectRequest(method: string): Promise<Json & { id: number; params?: unknown }> {
    const message = await this.receive();
    expect(message).toMatchObject({ method });
    expect(message).toHaveProperty('id');
    return message as Json & { id: number; params?: unknown };
  }

  send(message: Json): void {
    this.socket.send(JSON.stringify(message));
  }

  reply(id: unknown, result: unknown): void {
    this.send({ id, result });
  }

  replyError(id: unknown, code: number, message: string): void {
    this.send({ id, error: { code, message } });
  }

  /** The seed's `complete_initialize`: expects exact initialize params, answers, expects `initialized`. */
  async completeInitialize(clientName: string, sessionId: string, resumeSessionId?: string): Promise<void> {
    const initialize = await this.expectRequest('initialize');
    expect(initialize.params).toEqual(resumeSessionId === undefined ? { clientName } : { clientName, resumeSessionId });
    this.reply(initialize.id, { sessionId });
    expect(await this.receive()).toEqual({ method: 'initialized', params: {} });
  }

  close(): void {
    this.socket.terminate();
  }
}
