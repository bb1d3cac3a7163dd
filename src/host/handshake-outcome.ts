/**
 * The executors' handshakes: how the host answered one, as its metrics count it (a refused upgrade's
 * status, a registration's outcome), and the command an executor joins with.
 */
import type { Duplex } from 'node:stream';
import { HOST_DEFAULTS } from './host-options';
import type { SigV4Policy } from './sigv4';
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

/** The command an executor runs to join the host at `baseUrl` as `environmentId`, with `<placeholders>` where the credentials go. */
export function joinCommand(policy: SigV4Policy, baseUrl: string, environmentId: string): string {
  const service = policy.service === HOST_DEFAULTS.service ? '' : ` --aws-service ${policy.service}`;
  return (
    'AWS_ACCESS_KEY_ID=<access-key-id> AWS_SECRET_ACCESS_KEY=<secret-access-key> ' +
    `codex exec-server --remote ${baseUrl} --remote-transport direct --aws-sigv4 --aws-region ${policy.region}${service} --environment-id ${environmentId}`
  );
}
