/**
 * The files of a host's state in its data dir, and how they are read back: `host.json` (the port it bound
 * and the made token's digest), `environments/<id>.json` (the executor's session, and the environment's
 * owner and epoch) and `registrations/<id>.json` (the latest registration: its id, key id and the token's
 * digest). Each is replaced whole; a damaged one is reported (one line, no path) and read as absent.
 */
import { join } from 'node:path';
import { errnoOf } from '../errno';
import type { EnvironmentOwner, PersistedEnvironment, PersistedRegistration } from '../state-store';
import type { LogFs } from './log/log-fs';
import { readJsonObject } from './log/log-fs';

/** The host's own file in the data dir. */
export const HOST_FILE = 'host.json';
/** The folder of the environments' files. */
export const ENVIRONMENTS_DIR = 'environments';
/** The folder of the environments' latest registrations. */
export const REGISTRATIONS_DIR = 'registrations';

/** An environment's or a registration's file name: its id, percent-encoded. */
export const fileOf = (id: string): string => `${encodeURIComponent(id)}.json`;

const text = (value: unknown): value is string => typeof value === 'string' && value.length > 0;
const DIGEST = /^[0-9a-f]{64}$/;

/** What a data dir's state files hold, read at open. */
export interface LoadedState {
  port: number | undefined;
  madeTokenDigest: string | undefined;
  readonly sessions: Map<string, PersistedEnvironment>;
  readonly owners: Map<string, EnvironmentOwner>;
  readonly registrations: Map<string, PersistedRegistration>;
}

function toRegistration(object: Readonly<Record<string, unknown>>): PersistedRegistration | undefined {
  const { id, registrationId, accessKeyId, tokenDigest } = object;
  if (!text(id) || !text(registrationId) || !text(accessKeyId) || typeof tokenDigest !== 'string' || !DIGEST.test(tokenDigest)) return undefined;
  return { id, registrationId, accessKeyId, tokenDigest };
}

function toSession(object: Readonly<Record<string, unknown>>): PersistedEnvironment | undefined {
  const { id, sessionId, accessKeyId, updatedAt } = object;
  if (!text(id) || !text(sessionId) || !text(accessKeyId) || typeof updatedAt !== 'number') return undefined;
  return { id, sessionId, accessKeyId, updatedAt };
}

function toOwner(object: Readonly<Record<string, unknown>>): EnvironmentOwner | undefined {
  const { owner, epoch, signedAt } = object;
  if (!text(owner) || typeof epoch !== 'number' || !Number.isSafeInteger(epoch) || epoch < 1) return undefined;
  return typeof signedAt === 'number' && Number.isSafeInteger(signedAt) ? { owner, epoch, signedAt } : { owner, epoch };
}

/** Reads every state file of `dataDir` (see the module's doc). Rejects with the file system's error when a folder cannot be read. */
export async function loadState(fs: LogFs, dataDir: string, log: (line: string) => void): Promise<LoadedState> {
  const loaded: LoadedState = { port: undefined, madeTokenDigest: undefined, sessions: new Map(), owners: new Map(), registrations: new Map() };
  const read = (name: string): Promise<Readonly<Record<string, unknown>> | undefined> => readObject(fs, join(dataDir, name), name, log);
  const host = await read(HOST_FILE);
  const port = host?.['port'];
  if (typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65_536) loaded.port = port;
  else if (host !== undefined && port !== undefined) log(`${HOST_FILE} is damaged (its port): ignored`);
  const made = host?.['madeTokenDigest'];
  if (typeof made === 'string' && DIGEST.test(made)) loaded.madeTokenDigest = made;
  else if (made !== undefined) log(`${HOST_FILE} is damaged (its made token's digest): ignored`);
  for (const name of await jsonFiles(fs, join(dataDir, ENVIRONMENTS_DIR))) {
    const object = await read(`${ENVIRONMENTS_DIR}/${name}`);
    if (object === undefined) continue;
    const session = toSession(object);
    const owner = toOwner(object);
    const id = object['id'];
    if ((session === undefined && owner === undefined) || !text(id) || fileOf(id) !== name) {
      log(`${ENVIRONMENTS_DIR}/${name} is damaged: ignored`);
      continue;
    }
    if (session !== undefined) loaded.sessions.set(id, session);
    if (owner !== undefined) loaded.owners.set(id, owner);
  }
  for (const name of await jsonFiles(fs, join(dataDir, REGISTRATIONS_DIR))) {
    const object = await read(`${REGISTRATIONS_DIR}/${name}`);
    const record = object === undefined ? undefined : toRegistration(object);
    if (record !== undefined && fileOf(record.id) === name) loaded.registrations.set(record.id, record);
    else if (object !== undefined) log(`${REGISTRATIONS_DIR}/${name} is damaged: ignored`);
  }
  return loaded;
}

const jsonFiles = async (fs: LogFs, dir: string): Promise<string[]> => (await fs.readdir(dir)).filter((name) => name.endsWith('.json'));

/** A file's JSON object; a damaged or unreadable one is reported and treated as absent. */
async function readObject(fs: LogFs, path: string, name: string, log: (line: string) => void): Promise<Readonly<Record<string, unknown>> | undefined> {
  try {
    const object = await readJsonObject(fs, path);
    if (object === undefined && (await fs.fileSize(path)) !== undefined) log(`${name} is damaged: ignored`);
    return object;
  } catch (error: unknown) {
    log(`${name} cannot be read (${errnoOf(error)}): ignored`);
    return undefined;
  }
}
