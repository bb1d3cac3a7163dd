/**
 * A strict reader of the Prometheus text exposition format (0.0.4), for the specs: every line must be a
 * `# HELP`, a `# TYPE`, a sample or empty; every sample's family must have been typed before it; label
 * values must be properly quoted and escaped. Throws naming the first line that does not parse.
 */
import { get } from 'node:http';

/** One sample line. */
export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A parsed exposition. */
export interface PromExposition {
  /** Each family's `# TYPE`. */
  readonly types: ReadonlyMap<string, string>;
  /** Each family's `# HELP`. */
  readonly help: ReadonlyMap<string, string>;
  readonly samples: readonly PromSample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const HELP_LINE = new RegExp(`^# HELP (${NAME}) (.*)$`);
const TYPE_LINE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const SAMPLE_LINE = new RegExp(`^(${NAME})(\\{.*\\})? (\\S+)( -?\\d+)?$`);
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"/;
/** A float as Prometheus reads it (Go's ParseFloat: `NaN` and `Inf` in any case; prom-client writes `Nan`). */
const VALUE = /^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|[+-]?inf|nan)$/i;

/** Parses `text` (see the file comment). */
export function parseExposition(text: string): PromExposition {
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: PromSample[] = [];
  const lines = text.split('\n');
  if (lines.at(-1) !== '') throw new Error('the exposition does not end with a newline');
  for (const [i, line] of lines.slice(0, -1).entries()) {
    const fail = (why: string): never => {
      throw new Error(`line ${i + 1} ${why}: ${JSON.stringify(line)}`);
    };
    if (line === '') continue;
    const helpMatch = HELP_LINE.exec(line);
    if (helpMatch !== null) {
      help.set(helpMatch[1] ?? '', helpMatch[2] ?? '');
      continue;
    }
    const typeMatch = TYPE_LINE.exec(line);
    if (typeMatch !== null) {
      if (types.has(typeMatch[1] ?? '')) fail('types a family twice');
      types.set(typeMatch[1] ?? '', typeMatch[2] ?? '');
      continue;
    }
    if (line.startsWith('#')) fail('is a comment of no known kind');
    const sample = SAMPLE_LINE.exec(line);
    if (sample === null) fail('is not a sample');
    const name = sample?.[1] ?? '';
    const raw = sample?.[3] ?? '';
    if (!VALUE.test(raw)) fail('has a value that is not a number');
    if (familyOf(name, types) === undefined) fail('samples a family with no # TYPE before it');
    samples.push({ name, labels: parseLabels(sample?.[2] ?? '', fail), value: numberOf(raw) });
  }
  return { types, help, samples };
}

/** The number a valid sample value stands for. */
function numberOf(raw: string): number {
  const lower = raw.toLowerCase();
  if (lower === 'nan') return Number.NaN;
  if (lower.endsWith('inf')) return lower.startsWith('-') ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  return Number(raw);
}

/** The typed family a sample name belongs to (a histogram's `_bucket`, `_sum`, `_count` included). */
function familyOf(name: string, types: ReadonlyMap<string, string>): string | undefined {
  if (types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return types.get(base) === 'histogram' || types.get(base) === 'summary' ? base : undefined;
}

function parseLabels(braced: string, fail: (why: string) => never): Record<string, string> {
  const labels: Record<string, string> = {};
  if (braced === '') return labels;
  let rest = braced.slice(1, -1);
  while (rest !== '') {
    const label = LABEL.exec(rest);
    if (label === null) return fail('has a malformed label');
    const key = label[1] ?? '';
    if (key in labels) fail(`repeats label ${key}`);
    labels[key] = (label[2] ?? '').replace(/\\(["\\n])/g, (_match, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(label[0].length);
    if (rest.startsWith(',')) rest = rest.slice(1);
    else if (rest !== '') fail('has labels not separated by commas');
  }
  return labels;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
export function sampleValue(exposition: PromExposition, name: string, labels: Readonly<Record<string, string>> = {}): number {
  return exposition.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((total, s) => total + s.value, 0);
}

/** GETs `url` and parses the exposition (throws for a status other than 200 or a line that does not parse). */
export async function scrape(url: string): Promise<PromExposition> {
  const { status, text } = await getText(url);
  if (status !== 200) throw new Error(`${url} answered ${status}: ${text}`);
  return parseExposition(text);
}

/** One GET on a connection of its own (closed after), its status and body. */
export function getText(url: string): Promise<{ readonly status: number; readonly text: string; readonly contentType: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false, headers: { connection: 'close' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), contentType: String(res.headers['content-type']) }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}
