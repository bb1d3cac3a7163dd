import type { Observable } from 'rxjs';
import { concat, of, Subject } from 'rxjs';
import { ReplacementRejectedError } from '../errors';
import type { SocketPort } from '../transport/socket-port';
import type { ExecClient } from './exec-client';
import { isTerminal } from './exec-session';

/**
 * The sockets an executor dialled in with, as an Observable: the first one, then each replacement the
 * host hands in. One replacement slot (docs/protocol.md#replacing-an-accepted-socket): a replacement is
 * admitted only when no other is still being processed; the slot frees when that socket's attempt
 * attaches, is rejected for retry (-32010), or fails.
 */
export class AcceptedSockets {
  private readonly replacements = new Subject<SocketPort>();
  private slotTaken = false;

  /** The admitted sockets. Completes when the owning client fails or closes. */
  readonly sockets$: Observable<SocketPort>;

  constructor(initial: SocketPort) {
    this.sockets$ = concat(of(initial), this.replacements);
  }

  /** Frees the slot as the client reports each attempt's outcome. */
  watch(client: ExecClient): void {
    client.attempts$.subscribe({
      next: (outcome) => {
        if (outcome !== 'lost') this.slotTaken = false;
      },
      complete: () => this.replacements.complete(),
    });
  }

  /**
   * Admits a replacement: marks the client recovering, then queues the socket; the switchMap over
   * `sockets$` closes the old socket before the new handshake starts. Throws ReplacementRejectedError,
   * after closing `port`, when another replacement is still being processed or the client cannot take one.
   */
  replace(client: ExecClient, port: SocketPort): void {
    const state = client.state;
    if (isTerminal(state)) return reject(port, state.error.message);
    if (client.sessionId === undefined) return reject(port, 'accepted exec-server connection is missing its session ID');
    if (this.slotTaken) return reject(port, 'an accepted exec-server replacement is already in progress');
    this.slotTaken = true;
    client.markRecovering('exec-server executor was replaced');
    this.replacements.next(port);
  }
}

const reject = (port: SocketPort, message: string): never => {
  port.close(message);
  throw new ReplacementRejectedError(message);
};
