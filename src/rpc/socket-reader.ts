import type { SocketPort } from '../transport/socket-port';
import type { FlowTarget } from './connection-flow';
import type { PauseClock } from './pause-clock';
import type { PendingCalls } from './pending-calls';

/**
 * @internal The reading side of one connection, as its {@link ConnectionFlow} pauses it: the socket
 * (when the port can pause), the connection's running time (its keepalive waits on it) and its call
 * deadlines, all stopped and started together.
 */
export class SocketReader implements FlowTarget {
  constructor(
    private readonly port: SocketPort,
    private readonly clock: PauseClock,
    private readonly pending: PendingCalls,
  ) {}

  /** Stops reading the socket, the running time and the call deadlines. */
  pauseReading(): void {
    this.port.pause?.();
    this.clock.pause();
    this.pending.suspendDeadlines();
  }

  /** Starts the running time and the deadlines again (for what is left of them), then reads the socket. */
  resumeReading(): void {
    this.clock.resume();
    this.pending.resumeDeadlines();
    this.port.resume?.();
  }
}
