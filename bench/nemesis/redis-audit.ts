/**
 * What Redis holds after a schedule, read straight from it (not through a replica): the index of every
 * process, each process's meta hash (state, exit code, lost reason, argv) and its stream entries with
 * their kind, seq and, when the host writes them, the writing replica (`w`, its owner id) and its epoch
 * (`p`); and each environment's owner and epoch.
 */
import type Redis from 'ioredis';

/** The key prefix the lab's replicas use (the default). */
const PREFIX = 'exec-rx';

/** One entry of a process's stream. */
export interface AuditedEntry {
  readonly seq: number;
  /** `o` output, `x` exited, `c` closed, `g` a hole. */
  readonly kind: string;
  /** The writer's owner id, when the entry names one. */
  readonly writer: string | undefined;
  /** The writer's epoch, when the entry names one. */
  readonly epoch: number | undefined;
}

/** One process as Redis holds it. */
export interface AuditedProcess {
  readonly environmentId: string;
  readonly processId: string;
  readonly meta: Readonly<Record<string, string>>;
  readonly entries: readonly AuditedEntry[];
}

/** Everything the audit read. */
export interface RedisAudit {
  readonly processes: readonly AuditedProcess[];
  /** Each environment's owner hash (`owner`, `epoch`). */
  readonly owners: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** What went wrong reading, if anything. */
  readonly error: string | undefined;
}

/** Parses an index member (`["env","process"]`). */
function memberKey(member: string): { environmentId: string; processId: string } | undefined {
  try {
    const parsed: unknown = JSON.parse(member);
    if (Array.isArray(parsed) && typeof parsed[0] === 'string' && typeof parsed[1] === 'string') return { environmentId: parsed[0], processId: parsed[1] };
  } catch {
    // not the store's
  }
  return undefined;
}

/** The entries of one stream (`XRANGE - +` with Buffer replies). */
async function entriesOf(redis: Redis, key: string): Promise<AuditedEntry[]> {
  const raw = await redis.xrangeBuffer(key, '-', '+');
  return raw.map(([id, flat]) => {
    const fields = new Map<string, string>();
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const name = flat[i]?.toString('latin1') ?? '';
      // The chunk's bytes (`b`) are not needed here.
      if (name !== 'b') fields.set(name, flat[i + 1]?.toString('utf8') ?? '');
    }
    const epoch = fields.get('p');
    return { seq: Number(id.toString('latin1').split('-', 1)[0]), kind: fields.get('k') ?? '?', writer: fields.get('w'), epoch: epoch === undefined ? undefined : Number(epoch) };
  });
}

/** Reads what Redis holds of the processes it indexes and of `known` ones (see the module's doc). */
export async function auditRedis(
  redis: Redis,
  environments: readonly string[],
  known: readonly { readonly environmentId: string; readonly processId: string }[],
): Promise<RedisAudit> {
  const owners = new Map<string, Record<string, string>>();
  const processes: AuditedProcess[] = [];
  try {
    for (const id of environments) owners.set(id, await redis.hgetall(`${PREFIX}:{env:${id}}:owner`));
    const members = await redis.zrange(`${PREFIX}:{global}:processes`, 0, -1);
    const keys = new Map<string, { environmentId: string; processId: string }>();
    for (const key of [...members.map(memberKey), ...known]) if (key !== undefined) keys.set(`${key.environmentId}\u0000${key.processId}`, key);
    for (const { environmentId, processId } of keys.values()) {
      const tag = `${PREFIX}:{env:${environmentId}}`;
      const meta = await redis.hgetall(`${tag}:meta:${processId}`);
      const entries = await entriesOf(redis, `${tag}:log:${processId}`);
      if (Object.keys(meta).length > 0 || entries.length > 0) processes.push({ environmentId, processId, meta, entries });
    }
    return { processes, owners, error: undefined };
  } catch (error: unknown) {
    return { processes, owners, error: error instanceof Error ? error.message : String(error) };
  }
}
