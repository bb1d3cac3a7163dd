/**
 * Operator tokens: the bearer tokens that open the operator API, separate from the executors'
 * credentials. Each token has a **name** (what logs, limits and keyed starts know it by; never the
 * token), a **role** (`view`: read and follow only, `operate`: everything) and optionally the
 * **environments** it may touch (all by default).
 *
 * The operator tokens file (`--operator-tokens-file`) has one format, defined here: one token per line,
 * four fields separated by spaces, blank lines and lines starting with `#` ignored:
 *
 * ```text
 * # NAME    ROLE     ENVIRONMENTS   SECRET
 * ci        operate  build,test     sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
 * dashboard view     *              a-long-random-token-of-16-to-512-printable-characters
 * ```
 *
 * - NAME: letters, digits, `.`, `_` or `-` (at most 128), unique; `env` and `made` are the host's own.
 * - ROLE: `view` or `operate`.
 * - ENVIRONMENTS: `*` (every environment) or a comma list of environment ids.
 * - SECRET: `sha256:` and the 64 hex digits of the token's SHA-256 (the file then holds no token), or
 *   the token itself (16 to 512 printable characters, no spaces; one starting `sha256:` is read as a digest).
 *
 * A line of one field is the old format (a bare token): it is refused, with how to rewrite it. Errors name
 * the file and the line, never what the line holds. `EXEC_RX_OPERATOR_TOKEN` is an `operate` token named
 * `env`; the token the host makes when none is configured is an `operate` token named `made`. Only SHA-256
 * digests are kept; a presented token is digested and compared with each in constant time. Tokens never
 * reach a log, an error or an answer.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { ConfigError } from '../../errors';
import { isSafeId } from '../../wire/safe-id';
import { sameCaller, tokenSealOf } from './token-seal';
import { tokenSetDigest } from './token-set-digest';

/** Environment variable carrying one operator token (an `operate` token named {@link ENV_TOKEN_NAME}). */
export const OPERATOR_TOKEN_ENV = 'EXEC_RX_OPERATOR_TOKEN';

/** The name of the token from `EXEC_RX_OPERATOR_TOKEN`. */
export const ENV_TOKEN_NAME = 'env';

/** The name of the token the host makes when none is configured. */
export const MADE_TOKEN_NAME = 'made';

/** What a token may do: `view` reads and follows (GET, HEAD, event streams); `operate` does everything. */
export type OperatorRole = 'view' | 'operate';

/** Who a request's token says the caller is: its name, role and environments. Never the token. */
export interface OperatorCaller {
  /** The token's name (in logs, per-token limits and the scope of keyed starts). */
  readonly name: string;
  /** What it may do. */
  readonly role: OperatorRole;
  /** The environments it may touch; `undefined`: every one. */
  readonly environments: ReadonlySet<string> | undefined;
}

/** One token as code gives it (the file's line, as an object). */
export interface OperatorTokenSpec {
  /** Letters, digits, `.`, `_` or `-` (at most 128); unique among the tokens. */
  readonly name: string;
  /** @default 'operate' */
  readonly role?: OperatorRole;
  /** The environments it may touch. @default every one */
  readonly environments?: readonly string[];
  /** The token itself, or `sha256:` and the hex SHA-256 of it. */
  readonly secret: string;
}

const TOKEN = /^[\x21-\x7e]{16,512}$/;
const DIGEST = /^sha256:([0-9a-fA-F]{64})$/;
const RESERVED: ReadonlySet<string> = new Set([ENV_TOKEN_NAME, MADE_TOKEN_NAME]);
const TOKEN_RULE = '16 to 512 printable characters without spaces';

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

interface Entry {
  readonly caller: OperatorCaller;
  readonly digest: Buffer;
}

/** The digest a secret (a token or `sha256:<hex>`) stands for; throws a ConfigError `where` names, never showing it. */
function digestOfSecret(secret: string, where: string): Buffer {
  if (secret.toLowerCase().startsWith('sha256:')) {
    const hex = DIGEST.exec(secret)?.[1];
    if (hex === undefined) throw new ConfigError(`${where}: a sha256: secret must be followed by 64 hex digits`);
    return Buffer.from(hex, 'hex');
  }
  if (!TOKEN.test(secret)) throw new ConfigError(`${where}: the token must be ${TOKEN_RULE}`);
  return digest(secret);
}

/** Checks `spec` (`where` names it in errors) and makes its entry. */
function entryOf(spec: OperatorTokenSpec, where: string): Entry {
  if (!isSafeId(spec.name)) throw new ConfigError(`${where}: the name must be letters, digits, '.', '_' or '-' (at most 128)`);
  const role = spec.role ?? 'operate';
  if (role !== 'view' && role !== 'operate') throw new ConfigError(`${where}: the role must be view or operate`);
  let environments: ReadonlySet<string> | undefined;
  if (spec.environments !== undefined) {
    if (spec.environments.length === 0) throw new ConfigError(`${where}: name at least one environment (or * for every one)`);
    if (!spec.environments.every(isSafeId)) throw new ConfigError(`${where}: environments must be * or a comma list of ids (letters, digits, '.', '_' or '-')`);
    environments = new Set(spec.environments);
  }
  return { caller: { name: spec.name, role, environments }, digest: digestOfSecret(spec.secret, where) };
}

/** Refuses two entries of one name or one secret (the later one is named; no secret is shown). */
function checkUnique(entries: readonly { readonly entry: Entry; readonly where: string }[]): void {
  const names = new Map<string, string>();
  const digests = new Map<string, string>();
  for (const { entry, where } of entries) {
    const name = names.get(entry.caller.name);
    if (name !== undefined) throw new ConfigError(`${where}: the name ${entry.caller.name} is already used (${name})`);
    names.set(entry.caller.name, where);
    const hex = entry.digest.toString('hex');
    const same = digests.get(hex);
    if (same !== undefined) throw new ConfigError(`${where}: the same secret as ${same}`);
    digests.set(hex, where);
  }
}

const sameEntry = (a: Entry, b: Entry): boolean => sameCaller(a.caller, b.caller) && timingSafeEqual(a.digest, b.digest);

/** Whether `caller` may touch `environmentId`. */
export const mayTouch = (caller: OperatorCaller, environmentId: string): boolean => caller.environments === undefined || caller.environments.has(environmentId);

/** A token the host made, and the tokens that accept it. */
export interface GeneratedOperatorToken {
  /** Accepts `token` only (an `operate` token named `made`). */
  readonly tokens: OperatorTokens;
  /** The token itself: show it once (the url's fragment), then drop it. */
  readonly token: string;
}

/** The accepted operator tokens (as digests), each with its name, role and environments. */
export class OperatorTokens {
  private entries: readonly Entry[];
  private readonly revokeListeners = new Set<(names: ReadonlySet<string>) => void>();

  /**
   * @param tokens the accepted tokens: specs, or bare tokens (each an `operate` token on every
   * environment, named `token-N` by its position in this list: for code that builds the list once; the
   * file names its tokens). Throws a ConfigError naming only the token's position or name.
   */
  constructor(tokens: readonly (string | OperatorTokenSpec)[]) {
    if (tokens.length === 0) throw new ConfigError('no operator tokens');
    const checked = tokens.map((token, index) => {
      const where = `operator token ${index + 1}`;
      return { entry: entryOf(typeof token === 'string' ? { name: `token-${index + 1}`, secret: token } : token, where), where };
    });
    checkUnique(checked);
    this.entries = checked.map(({ entry }) => entry);
  }

  /** The tokens whose SHA-256 digests (hex) are `digests`: a restarted host accepting the token it made at its first start (`operate`, named `made`, then `made-2` …). */
  static fromDigests(digests: readonly string[]): OperatorTokens {
    return new OperatorTokens(digests.map((hex, index) => ({ name: index === 0 ? MADE_TOKEN_NAME : `${MADE_TOKEN_NAME}-${index + 1}`, secret: `sha256:${hex}` })));
  }

  /** The hex SHA-256 digest of `token`: what a host keeps of a token it made. */
  static digestOf(token: string): string {
    return digest(token).toString('hex');
  }

  /** A fresh random token (256 bits, base64url) and the tokens that accept it (`operate`, named `made`); show the token once, then drop it. */
  static generate(): GeneratedOperatorToken {
    const token = randomBytes(32).toString('base64url');
    return { tokens: new OperatorTokens([{ name: MADE_TOKEN_NAME, secret: token }]), token };
  }

  /**
   * Accepts `next`'s tokens from now on instead of these (a reload: the requests that come after it are
   * checked against the new set). Returns the names of the tokens it revoked: those gone, or whose
   * secret, role or environments changed; the listeners of {@link onRevoke} hear them first (the operator
   * API ends their event streams).
   */
  replaceWith(next: OperatorTokens): ReadonlySet<string> {
    const revoked = new Set(this.entries.filter((entry) => !next.entries.some((kept) => sameEntry(entry, kept))).map((entry) => entry.caller.name));
    this.entries = next.entries;
    if (revoked.size > 0) for (const listener of [...this.revokeListeners]) listener(revoked);
    return revoked;
  }

  /** Calls `listener` with the names a {@link replaceWith} revoked; returns the function that stops it. */
  onRevoke(listener: (names: ReadonlySet<string>) => void): () => void {
    this.revokeListeners.add(listener);
    return () => void this.revokeListeners.delete(listener);
  }

  /** How many tokens are accepted. */
  get size(): number {
    return this.entries.length;
  }

  /** The accepted set's digest (16 hex digits, see `./token-set-digest`): the same on replicas with the same set, in any order; another after a change. */
  get setDigest(): string {
    return tokenSetDigest(this.entries);
  }

  /** The accepted tokens' names, roles and environments (no secret). */
  get callers(): readonly OperatorCaller[] {
    return this.entries.map((entry) => entry.caller);
  }

  /**
   * Who the token an `Authorization: Bearer …` header presents is (its name, role and environments), or
   * `undefined` when it presents none of them. Every digest is compared, in constant time.
   */
  authenticate(authorization: string | undefined): OperatorCaller | undefined {
    // RFC 9110 §11.4: `auth-scheme 1*SP token68`; the scheme is case-insensitive, the token is not.
    const match = authorization === undefined ? null : /^Bearer +([\x21-\x7e]{1,512})$/i.exec(authorization);
    if (match === null || match[1] === undefined) return undefined;
    const presented = digest(match[1]);
    let found: OperatorCaller | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(entry.digest, presented)) found = entry.caller;
    }
    return found;
  }

  /** The seal keyed by `key` (a download ticket) of the accepted token `caller` is (the same name, role and environments), see `./token-seal`; `undefined` when none is. */
  tokenSeal(caller: OperatorCaller, key: string): string | undefined {
    return tokenSealOf(this.entries, caller, key);
  }
}

/** Where the operator tokens came from, and a warning to show (a file others can read); names no token. */
export interface LoadedOperatorTokens {
  /** The tokens read. */
  readonly tokens: OperatorTokens;
  /** Where they came from (the file, `EXEC_RX_OPERATOR_TOKEN`, or both). */
  readonly source: string;
  /** A warning to show, e.g. a tokens file others can read. */
  readonly warning?: string;
}

/**
 * The tokens of one line of a tokens file (see the module comment), `undefined` for a blank or comment
 * line. Throws a ConfigError naming `where` (the file and line) and what is wrong, never the line's text.
 */
export function parseOperatorTokenLine(raw: string, where: string): OperatorTokenSpec | undefined {
  const line = raw.trim();
  if (line === '' || line.startsWith('#')) return undefined;
  const fields = line.split(/\s+/);
  if (fields.length === 1) {
    throw new ConfigError(`${where} holds a bare token (the old format, one token per line): write it as "NAME operate * TOKEN" (or "NAME operate * sha256:HEX")`);
  }
  const [name = '', role = '', environments = '', secret = ''] = fields;
  if (fields.length !== 4) throw new ConfigError(`${where} must be NAME ROLE ENVIRONMENTS SECRET (4 fields separated by spaces), not ${fields.length} fields`);
  if (!isSafeId(name)) throw new ConfigError(`${where}: the name must be letters, digits, '.', '_' or '-' (at most 128)`);
  if (RESERVED.has(name)) throw new ConfigError(`${where}: the name ${name} is the host's own (${ENV_TOKEN_NAME}: ${OPERATOR_TOKEN_ENV}, ${MADE_TOKEN_NAME}: the token it makes)`);
  if (role !== 'view' && role !== 'operate') throw new ConfigError(`${where}: the role must be view or operate`);
  const ids = environments === '*' ? undefined : environments.split(',');
  if (ids !== undefined && !ids.every(isSafeId)) throw new ConfigError(`${where}: environments must be * or a comma list of ids (letters, digits, '.', '_' or '-')`);
  return { name, role, secret, ...(ids === undefined ? {} : { environments: ids }) };
}

/**
 * The operator tokens from `file` (the format of the module comment) and `EXEC_RX_OPERATOR_TOKEN` (an
 * `operate` token named `env`); `undefined` when neither is set (the host then makes one). Throws a
 * ConfigError naming the file and the bad line's number, never a token.
 */
export function loadOperatorTokens(file: string | undefined, env: NodeJS.ProcessEnv = process.env): LoadedOperatorTokens | undefined {
  const checked: { readonly entry: Entry; readonly where: string }[] = [];
  const sources: string[] = [];
  let warning: string | undefined;
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
      if (process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0) warning = `operator tokens file ${file} is readable by others; chmod 600 it`;
    } catch (error: unknown) {
      const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'unreadable';
      throw new ConfigError(`cannot read operator tokens file ${file} (${code})`);
    }
    text.split(/\r?\n/).forEach((raw, index) => {
      const where = `${file}: line ${index + 1}`;
      const spec = parseOperatorTokenLine(raw, where);
      if (spec !== undefined) checked.push({ entry: entryOf(spec, where), where });
    });
    if (checked.length === 0) throw new ConfigError(`operator tokens file ${file} holds no token`);
    sources.push(file);
  }
  const fromEnv = env[OPERATOR_TOKEN_ENV];
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!TOKEN.test(fromEnv)) throw new ConfigError(`${OPERATOR_TOKEN_ENV} must be ${TOKEN_RULE}`);
    checked.push({ entry: entryOf({ name: ENV_TOKEN_NAME, secret: `sha256:${OperatorTokens.digestOf(fromEnv)}` }, OPERATOR_TOKEN_ENV), where: OPERATOR_TOKEN_ENV });
    sources.push(OPERATOR_TOKEN_ENV);
  }
  if (checked.length === 0) return undefined;
  checkUnique(checked);
  const specs = checked.map(({ entry }): OperatorTokenSpec => ({
    name: entry.caller.name,
    role: entry.caller.role,
    secret: `sha256:${entry.digest.toString('hex')}`,
    ...(entry.caller.environments === undefined ? {} : { environments: [...entry.caller.environments] }),
  }));
  return { tokens: new OperatorTokens(specs), source: sources.join(' + '), ...(warning === undefined ? {} : { warning }) };
}
