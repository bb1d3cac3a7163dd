/**
 * Leak check for every spec file: `afterAll(expectNoLeakedResources)`. It compares the process's active
 * resources with what was there when the spec file loaded (jest's own pipes and timers), waiting at most
 * about two seconds for handles that are still closing.
 */
const WATCHED = ['TCPSocketWrap', 'TCPServerWrap', 'ProcessWrap', 'PipeWrap', 'Timeout', 'TTYWrap', 'UDPWrap'];

const countByType = (): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
};

const baseline = countByType();

const extras = (): string[] => {
  const now = countByType();
  return WATCHED.flatMap((type) => {
    const extra = (now.get(type) ?? 0) - (baseline.get(type) ?? 0);
    return extra > 0 ? [`${extra} × ${type}`] : [];
  });
};

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Fails when sockets, servers, child processes or timers opened by the spec file are still active. */
export async function expectNoLeakedResources(): Promise<void> {
  const deadline = Date.now() + 2_000;
  let left = extras();
  while (left.length > 0 && Date.now() < deadline) {
    await nextTurn();
    left = extras();
  }
  expect(left).toEqual([]);
}
