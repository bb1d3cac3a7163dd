/**
 * A real `redis-server` (Debian's 7.0) for the specs that need one: the bench's launcher
 * (`bench/lib/redis-server.ts`, one copy for both), started on a free loopback port with its own temp dir,
 * restarted on the same port (with its data or empty), stopped by the spec in `afterAll`. A machine
 * without `redis-server` fails the spec loudly with the command that installs it (the README's test
 * command does, as root).
 */
import type { RunningRedis } from '../../bench/lib/redis-server';

export type { RedisRestartOptions, RedisServerOptions } from '../../bench/lib/redis-server';
export { requireRedisServer, startRedisServer } from '../../bench/lib/redis-server';

/** A running redis-server (the bench's {@link RunningRedis}). */
export type SpecRedis = RunningRedis;
