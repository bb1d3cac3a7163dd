/**
 * GitHub's heading anchors of a markdown page, for the specs that check links into the docs
 * (spec/docs/readme.int.spec.ts, spec/docs/protocol-doc.spec.ts). `scripts/check-links.mjs` (plain Node,
 * run by `npm test` outside jest) has its own copy of the same rules, checked by spec/docs/link-check.spec.ts.
 */

/** GitHub's heading anchor: links and markup dropped, lower case, punctuation dropped (`-` and `_` kept), spaces to `-`. */
export function slugOf(heading: string): string {
  const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, '');
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-');
}

/** The anchors of a page's headings (outside fenced blocks), in order, numbered `-1`, `-2`, … on repeats as GitHub does. */
export function anchorsOf(markdown: string): string[] {
  const seen = new Map<string, number>();
  const anchors: string[] = [];
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (heading === null) continue;
    const base = slugOf(heading[1] ?? '');
    const repeats = seen.get(base) ?? 0;
    seen.set(base, repeats + 1);
    anchors.push(repeats === 0 ? base : `${base}-${repeats}`);
  }
  return anchors;
}
