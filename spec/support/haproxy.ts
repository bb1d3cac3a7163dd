/**
 * A real HAProxy (Debian's 2.6) in front of a spec's backends, run from the README's configuration
 * (`docs/haproxy.cfg`) with only its ports (and, when asked, the health path) replaced: the bench's
 * launcher (`bench/lib/haproxy.ts`, one copy for both). Started in the foreground on a free loopback port,
 * stopped by the spec in `afterAll`. A machine without `haproxy` fails the spec loudly with the command
 * that installs it.
 */
import type { RunningHaproxy } from '../../bench/lib/haproxy';

export type { HaproxyBackend, HaproxyOptions } from '../../bench/lib/haproxy';
export { HAPROXY_TEMPLATE, haproxyConfig, requireHaproxy, startHaproxy } from '../../bench/lib/haproxy';

/** A running HAProxy (the bench's {@link RunningHaproxy}). */
export type SpecHaproxy = RunningHaproxy;
