/**
 * The README's HAProxy configuration (`docs/haproxy.cfg`) made concrete: its frontend's `bind` on a given
 * loopback port and its `server` lines replaced by one per backend. The one place both the bench
 * (`./replica-procs`) and the specs (`spec/support/haproxy.ts`) fill it in.
 */

/** A `server NAME 127.0.0.1:PORT …` line of the template. */
const SERVER_LINE = /^(\s*server\s+)\S+(\s+)127\.0\.0\.1:\d+(.*)$/;
/** The frontend's `bind 127.0.0.1:PORT` line. */
const BIND_LINE = /^(\s*bind\s+)127\.0\.0\.1:\d+(.*)$/;

/** One replica behind the balancer. */
export interface TemplateBackend {
  readonly name: string;
  readonly port: number;
}

/**
 * `template` with the frontend on `port` and its `server` lines replaced by one per backend (at the first
 * one's place, with its options). Throws naming `source` when the template lacks what is replaced.
 */
export function fillHaproxyTemplate(template: string, source: string, port: number, backends: readonly TemplateBackend[]): string {
  const lines = template.split('\n');
  const first = lines.findIndex((line) => SERVER_LINE.test(line));
  const bind = lines.findIndex((line) => BIND_LINE.test(line));
  if (first < 0 || bind < 0) throw new Error(`${source} has no "bind 127.0.0.1:PORT" or no "server NAME 127.0.0.1:PORT" line`);
  const model = SERVER_LINE.exec(lines[first] ?? '');
  const servers = backends.map((b) => `${model?.[1] ?? '    server '}${b.name}${model?.[2] ?? ' '}127.0.0.1:${b.port}${model?.[3] ?? ''}`);
  const out: string[] = [];
  lines.forEach((line, index) => {
    if (index === first) out.push(...servers);
    else if (SERVER_LINE.test(line)) return;
    else if (index === bind) out.push(line.replace(BIND_LINE, `$1127.0.0.1:${port}$2`));
    else out.push(line);
  });
  return out.join('\n');
}
