/**
 * Operator tokens: the bearer tokens that open the operator API, separate from the executors'
 * credentials. They come from a file (`--operator-tokens-file`, one token per line) or
 * `EXEC_RX_OPERATOR_TOKEN`; with none configured the host makes one and shows it once. Only SHA-256
 * digests are kept; a presented token is digested and compared with each in constant time. Tokens
 * never reach a log, an error or an answer.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { ConfigError } from '../../errors';

/** Environment variable carrying one operator token. */
export const OPERATOR_TOKEN_ENV = 'EXEC_RX_OPERATOR_TOKEN';

const TOKEN = /^[\x21-\x7e]{16,512}$/;

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** A token the host made, and the tokens that accept it. */
export interface GeneratedOperatorToken {
  /** Accepts `token` only. */
  readonly tokens: OperatorTokens;
  /** The token itself: show it once (the url's fragment), then drop it. */
  readonly token: string;
}

/** The accepted operator tokens (as digests). */
export class OperatorTokens {
  private digests: readonly Buffer[];

  /** @param tokens the accepted tokens; each at least 16 printable characters (throws a ConfigError naming only its position). */
  constructor(tokens: readonly string[]) {
    tokens.forEach((token, index) => {
      if (!TOKEN.test(token)) throw new ConfigError(`operator token ${index + 1} must be 16 to 512 printable characters without spaces`);
    });
    if (tokens.length === 0) throw new ConfigError('no operator tokens');
    this.digests = tokens.map(digest);
  }

  /** The tokens whose SHA-256 digests (hex) are `digests`: a restarted host accepting the token it made at its first start. */
  static fromDigests(digests: readonly string[]): OperatorTokens {
    const tokens = new OperatorTokens(['x'.repeat(16)]); // a placeholder, replaced at once: no token is known, only digests
    tokens.digests = digests.map((hex) => Buffer.from(hex, 'hex'));
    return tokens;
  }

  /** The hex SHA-256 digest of `token`: what a host keeps of a token it made. */
  static digestOf(token: string): string {
    return digest(token).toString('hex');
  }

  /** A fresh random token (256 bits, base64url) and the tokens that accept it; show the token once, then drop it. */
  static generate(): GeneratedOperatorToken {
    const token = randomBytes(32).toString('base64url');
    return { tokens: new OperatorTokens([token]), token };
  }

  /**
   * Accepts `next`'s tokens from now on instead of these (a reload: the requests that come after it are
   * checked against the new set; the ids of {@link authenticate} are positions in it).
   */
  replaceWith(next: OperatorTokens): void {
    this.digests = next.digests;
  }

  /** How many tokens are accepted. */
  get size(): number {
    return this.digests.length;
  }

  /**
   * The id of the token an `Authorization: Bearer …` header presents (its position, for per-token
   * limits), or `undefined` when it presents none of them. Every digest is compared, in constant time.
   */
  authenticate(authorization: string | undefined): string | undefined {
    // RFC 9110 §11.4: `auth-scheme 1*SP token68`; the scheme is case-insensitive, the token is not.
    const match = authorization === undefined ? null : /^Bearer +([\x21-\x7e]{1,512})$/i.exec(authorization);
    if (match === null || match[1] === undefined) return undefined;
    const presented = digest(match[1]);
    let found: string | undefined;
    this.digests.forEach((candidate, index) => {
      if (timingSafeEqual(candidate, presented)) found = `token-${index + 1}`;
    });
    return found;
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
 * The operator tokens from `file` (one per line; blank lines and `#` comments ignored) and
 * `EXEC_RX_OPERATOR_TOKEN`; `undefined` when neither is set (the host then makes one). Throws a ConfigError
 * naming the file and the bad line's number only.
 */
export function loadOperatorTokens(file: string | undefined, env: NodeJS.ProcessEnv = process.env): LoadedOperatorTokens | undefined {
  const tokens: string[] = [];
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
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      if (!TOKEN.test(line)) throw new ConfigError(`${file}: line ${index + 1} is not a token (16 to 512 printable characters, no spaces)`);
      tokens.push(line);
    });
    if (tokens.length === 0) throw new ConfigError(`operator tokens file ${file} holds no token`);
    sources.push(file);
  }
  const fromEnv = env[OPERATOR_TOKEN_ENV];
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!TOKEN.test(fromEnv)) throw new ConfigError(`${OPERATOR_TOKEN_ENV} must be 16 to 512 printable characters without spaces`);
    tokens.push(fromEnv);
    sources.push(OPERATOR_TOKEN_ENV);
  }
  if (tokens.length === 0) return undefined;
  return { tokens: new OperatorTokens(tokens), source: sources.join(' + '), ...(warning === undefined ? {} : { warning }) };
}
