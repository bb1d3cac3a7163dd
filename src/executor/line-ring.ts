const MAX_LINE_CHARS = 2_000;

/**
 * A bounded buffer of the most recent lines of a text stream (executor stderr, for diagnostics): keeps the
 * last `limit` complete lines plus the unterminated tail; each line is cut to 2000 characters.
 */
export class LineRing {
  private readonly lines: string[] = [];
  private partial = '';
  constructor(private readonly limit: number) {}

  /** Appends text (a bound function, usable directly as a 'data' listener). */
  readonly push = (text: string): void => {
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) this.add(line);
    if (this.partial.length > MAX_LINE_CHARS) {
      this.add(this.partial);
      this.partial = '';
    }
  };

  /** The retained lines, oldest first. */
  snapshot(): string[] {
    return this.partial === '' ? [...this.lines] : [...this.lines, this.partial];
  }

  private add(line: string): void {
    this.lines.push(line.replace(/\r$/, '').slice(0, MAX_LINE_CHARS));
    if (this.lines.length > this.limit) this.lines.shift();
  }
}

