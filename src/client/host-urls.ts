/**
 * The host base urls one `HostClient` may use (several replicas of one exec-rx cluster, issue 33), in
 * the order given: every request and every (re)connection of an event stream goes to the current one;
 * one that does not answer (refused, reset, timed out) or answers 502, 503 or 504 makes the client move
 * to the next (round robin). The client stays on the one that answered last (sticky).
 */

/** The base urls of one client and which one it uses now; shared by all its calls and streams. */
export class HostUrls {
  private readonly list: readonly string[];
  private index = 0;

  /** `urls` (at least one), each without its trailing slashes. Throws RangeError for none. */
  constructor(urls: string | readonly string[]) {
    const given = typeof urls === 'string' ? [urls] : urls;
    if (given.length === 0) throw new RangeError('HostClient needs at least one host url');
    this.list = given.map((url) => url.replace(/\/+$/, ''));
  }

  /** How many urls there are. */
  get size(): number {
    return this.list.length;
  }

  /** Every url, in order. */
  get all(): readonly string[] {
    return this.list;
  }

  /** The url to use now: the first, until one failed; then the one that answered last. */
  get current(): string {
    return this.list[this.index] ?? this.list[0] ?? '';
  }

  /**
   * The attempt at `failed` got no usable answer: use the next url from now on. Only when `failed` is
   * still the current one, so that calls failing together on one url move on once, not once each.
   */
  moveOn(failed: string): void {
    if (this.list.length > 1 && this.current === failed) this.index = (this.index + 1) % this.list.length;
  }
}

/**
 * One call's or stream's walk over the urls: after a failure the next url is tried at once while one of
 * this round (one try at each url) is left untried; once every url failed in a row, the caller backs off
 * as with one url. With one url it always backs off, as a client of one host did.
 */
export class UrlWalk {
  private failedInRow = 0;

  constructor(private readonly urls: HostUrls) {}

  /** The url of the next attempt. */
  get url(): string {
    return this.urls.current;
  }

  /** An attempt at `url` failed: moves on; `true` when the next url is still untried in this round (try it without waiting). */
  failed(url: string): boolean {
    this.urls.moveOn(url);
    this.failedInRow += 1;
    if (this.failedInRow < this.urls.size) return true;
    this.failedInRow = 0;
    return false;
  }

  /** A url answered: the next failure starts a new round. */
  answered(): void {
    this.failedInRow = 0;
  }
}
