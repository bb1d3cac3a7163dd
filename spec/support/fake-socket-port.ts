import type { CloseInitiator } from '../../src/errors';
import { TransportClosedError } from '../../src/errors';
import type { SocketHandlers, SocketPort } from '../../src/transport/socket-port';

/** What a scripted peer does with each frame the client sends. */
export type PeerScript = (frame: Record<string, unknown>, peer: FakeSocketPort) => void;

/**
 * An in-memory SocketPort (rxjs `MockWebSocket` + MCP `InMemoryTransport`): records what the client
 * sends, delivers what the spec scripts, and can drop like a vanished peer. Paused, it holds what the
 * peer sends (messages and pongs, in order) as a socket nobody reads would, and hands it over on resume.
 */
export class FakeSocketPort implements SocketPort {
  readonly label = 'fake';
  readonly sent: Record<string, unknown>[] = [];
  pings = 0;
  closedWith: { initiator: CloseInitiator; reason: string } | undefined;
  /** Whether the client paused reading; `pauses` counts the times it did. */
  paused = false;
  pauses = 0;
  private handlers: SocketHandlers | undefined;
  /** What the peer sent while paused, in order. */
  private readonly held: (() => void)[] = [];

  constructor(private readonly script?: PeerScript) {}

  get isOpen(): boolean {
    return this.closedWith === undefined;
  }

  send(frame: string): void {
    if (this.closedWith !== undefined) throw new TransportClosedError(this.closedWith.initiator, 1006, 'closed');
    const parsed = JSON.parse(frame) as Record<string, unknown>;
    this.sent.push(parsed);
    this.script?.(parsed, this);
  }

  close(reason = 'closed by client'): void {
    this.end('local', reason);
  }

  listen(handlers: SocketHandlers): () => void {
    this.handlers = handlers;
    return () => {
      this.handlers = undefined;
    };
  }

  readonly ping = (): void => {
    this.pings += 1;
  };

  readonly pause = (): void => {
    if (!this.paused) this.pauses += 1;
    this.paused = true;
  };

  readonly resume = (): void => {
    this.paused = false;
    while (!this.paused) {
      const next = this.held.shift();
      if (next === undefined) return;
      next();
    }
  };

  /** Messages and pongs the peer sent that a paused client has not read. */
  get heldCount(): number {
    return this.held.length;
  }

  /** Delivers a message (an object is JSON-encoded; a string is sent as is). */
  deliver(message: unknown): void {
    const frame = typeof message === 'string' ? message : JSON.stringify(message);
    this.arrive(() => this.handlers?.message(frame));
  }

  deliverBinary(bytes: Uint8Array): void {
    this.arrive(() => this.handlers?.message(bytes));
  }

  pong(): void {
    this.arrive(() => this.handlers?.pong?.());
  }

  private arrive(read: () => void): void {
    if (this.paused) this.held.push(read);
    else read();
  }

  /** The peer vanishes. */
  drop(reason = 'peer vanished'): void {
    this.end('remote', reason);
  }

  private end(initiator: CloseInitiator, reason: string): void {
    if (this.closedWith !== undefined) return;
    this.closedWith = { initiator, reason };
    this.handlers?.close(initiator, 1006, reason);
  }
}
