/**
 * The names of the Redis keys the Redis adapters write (state and logs). Every key of one environment
 * shares one Redis Cluster hash tag, `{env:<id>}`, so a Lua script may read the environment's owner and
 * write any of its records in one step on one shard; the few keys of the whole store (the made token's
 * digest, the set of environment ids, the keyed-start index, the boot marker) share the tag `{global}`.
 *
 *     <prefix>:{env:<id>}:owner              HASH owner, epoch (the epoch as the text of an integer)
 *     <prefix>:{env:<id>}:lease              STRING owner's lease (PX ttl)
 *     <prefix>:{env:<id>}:session            HASH sessionId, accessKeyId, updatedAt
 *     <prefix>:{env:<id>}:registration       HASH registrationId, accessKeyId, tokenDigest, registeredAt (Redis's clock, ms)
 *     <prefix>:{env:<id>}:state              HASH what its owner published: owner, epoch, state, generation, errorCode, error
 *                                            (or, for a claim that said nothing yet, owner, epoch, graceUntil)
 *     <prefix>:{env:<id>}:stdin:<processId>  STRING a stdin record's JSON
 *     <prefix>:{env:<id>}:stdins             SET the process ids with a stdin record
 *     <prefix>:{env:<id>}:start:<digest>     HASH a keyed start
 *     <prefix>:{global}:made-token           STRING the made operator token's digest
 *     <prefix>:{global}:environments         SET the ids with a registration or a session
 *     <prefix>:{global}:starts               ZSET keyed-start digests, scored in the order recorded
 *     <prefix>:{global}:start-environments   HASH digest -> "<nonce> <environmentId>"
 *     <prefix>:{global}:start-sequence       STRING the counter that orders the keyed starts
 *     <prefix>:{global}:boot                 STRING a random id: gone or changed when Redis lost its data
 *     <prefix>:{global}:lost                 STRING when a replica found the data lost (PX: while owners may still write back)
 *     <prefix>:{global}:replica:<owner>      STRING the internal url a replica takes forwarded calls at (PX: its lease)
 *     <prefix>:{global}:ticket:<digest>      STRING a download ticket's record (JSON; PX: its ttl), under the ticket's SHA-256 (hex), never the ticket
 *
 * Ids go in percent-encoded (`encodeURIComponent`: the host's safe ids are unchanged), so no id can end a
 * hash tag (`}`) or look like another key's suffix (`:`). The prefix (default `exec-rx`) separates
 * stores on one Redis (specs use a fresh one per test); it may hold neither `{` nor `}`.
 */

/** The prefix of every key unless the store is given another. */
export const DEFAULT_PREFIX = 'exec-rx';

/** An id as it appears in a key (percent-encoded; a safe id is unchanged). */
const segment = (id: string): string => encodeURIComponent(id);

/** Throws unless `prefix` can prefix keys: not empty, no `{` or `}` (they would move the hash tag). */
export function checkPrefix(prefix: string): string {
  if (prefix === '' || /[{}]/.test(prefix)) throw new TypeError('a Redis key prefix must be non-empty and hold neither { nor }');
  return prefix;
}

/** The start of every key of environment `environmentId`: `${prefix}:{env:${id}}` (its hash tag included). */
export const environmentTag = (prefix: string, environmentId: string): string => `${prefix}:{env:${segment(environmentId)}}`;

/** The HASH of who owns environment `environmentId`: fields `owner` and `epoch` (the text of an integer). */
export const ownerKey = (prefix: string, environmentId: string): string => `${environmentTag(prefix, environmentId)}:owner`;

/** The owner's lease of environment `environmentId` (a STRING with a PX ttl; see `RedisStateStore.renewLease`). */
export const leaseKey = (prefix: string, environmentId: string): string => `${environmentTag(prefix, environmentId)}:lease`;

/** The HASH of environment `environmentId`'s executor session. */
export const sessionKey = (prefix: string, environmentId: string): string => `${environmentTag(prefix, environmentId)}:session`;

/** The HASH of environment `environmentId`'s latest registration (the token's digest, never the token). */
export const registrationKey = (prefix: string, environmentId: string): string => `${environmentTag(prefix, environmentId)}:registration`;

/** The HASH of what environment `environmentId`'s owner published of it (see `./redis-environment-states`). */
export const stateKey = (prefix: string, environmentId: string): string => `${environmentTag(prefix, environmentId)}:state`;

/** The STRING (JSON) of one process's stdin record. */
export const stdinKey = (prefix: string, environmentId: string, processId: string): string => `${environmentTag(prefix, environmentId)}:stdin:${segment(processId)}`;

/** The SET of the process ids of environment `environmentId` that have a stdin record (what `forget` deletes). */
export const stdinSetKey = (prefix: string, environmentId: string): string => `${environmentTag(prefix, environmentId)}:stdins`;

/** The HASH of one keyed start, in its environment's tag. */
export const startKey = (prefix: string, environmentId: string, digest: string): string => `${environmentTag(prefix, environmentId)}:start:${segment(digest)}`;

/** The start of every key of the whole store: `${prefix}:{global}`. */
export const globalTag = (prefix: string): string => `${prefix}:{global}`;

/** The STRING of the digest of the operator token a host made. */
export const madeTokenKey = (prefix: string): string => `${globalTag(prefix)}:made-token`;

/** The SET of the environment ids with a registration or a session. */
export const environmentsKey = (prefix: string): string => `${globalTag(prefix)}:environments`;

/** The ZSET of keyed-start digests, scored by {@link startSequenceKey}: the lowest goes first past the bound. */
export const startIndexKey = (prefix: string): string => `${globalTag(prefix)}:starts`;

/** The HASH of keyed-start digest to `"<nonce> <environmentId>"` (where its record is, and which write made it). */
export const startEnvironmentsKey = (prefix: string): string => `${globalTag(prefix)}:start-environments`;

/** The counter that scores the keyed-start index (so starts recorded in the same millisecond keep their order). */
export const startSequenceKey = (prefix: string): string => `${globalTag(prefix)}:start-sequence`;

/** The boot marker: a random id set at a store's open when missing; gone or changed once Redis lost its data. */
export const bootKey = (prefix: string): string => `${globalTag(prefix)}:boot`;

/** Set (with a PX ttl) by a replica that found Redis's data lost: while it lives, owners may still be writing back. */
export const lostKey = (prefix: string): string => `${globalTag(prefix)}:lost`;

/** The STRING of the internal url replica `owner` takes forwarded calls at (PX: renewed with its leases). */
export const replicaKey = (prefix: string, owner: string): string => `${globalTag(prefix)}:replica:${segment(owner)}`;

/** The STRING (JSON, PX: its ttl) of the download ticket whose SHA-256 (hex) is `digest`: never the ticket itself (see `./redis-ticket-store`). */
export const ticketKey = (prefix: string, digest: string): string => `${globalTag(prefix)}:ticket:${segment(digest)}`;
