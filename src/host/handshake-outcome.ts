/** How the host answered a handshake, as its metrics count it: a refused upgrade's status, a registration's outcome. */
import type { Duplex } from 'node:stream';
import { refuseUpgrade } from './host-http';
import type { HandshakeOutcome } from './metrics/host-metrics';

/** Refuses an upgrade with `status`; returns it as the outcome. */
export function refused(socket: Duplex, status: 409 | 401 | 429 | 503, headers: Readonly<Record<string, string>> = {}): HandshakeOutcome {
  refuseUpgrade(socket, status, headers);
  return String(status) as HandshakeOutcome;
}

/** The outcome of a registration answered `status` (an unexpected one counts as 500: the label values stay few). */
export function registrationOutcome(status: number): HandshakeOutcome {
  if (status === 200) return 'accepted';
  const known: readonly HandshakeOutcome[] = ['400', '401', '404', '405', '409', '413', '429', '500', '503'];
  return known.find((outcome) => outcome === String(status)) ?? '500';
}
