/**
 * Leak checks for every spec file. `--detectOpenHandles` never fails a run, so `leak-check.ts` (loaded
 * for every file by jest.config.js) ends each file with {@link expectNoLeakedResources}, and executors,
 * servers and proxies are stopped by a tracker.
 *
 * Importing this module registers a `beforeAll` that snapshots `process.getActiveResourcesInfo()`. That
 * baseline is what jest itself holds inside a hook: its worker IPC pipes (3 PipeWrap in a worker, 2 plus
 * reporter timers in-band) and the hook's own timeout timer. Import it (directly or via `./executor`)
 * before the spec starts anything.
 */

/** Request objects that finish by themselves (they belong to a handle we already count, or to fs). */
const TRANSIENT = new Set([
  'Immediate',
  'FSReqCallback',
  'FSReqPromise',
  'GetAddrInfoReqWrap',
  'GetNameInfoReqWrap',
  'QueryReqWrap',
  'ShutdownWrap',
  'WriteWrap',
]);
const SETTLE_LIMIT_MS = 2_000;

/** Trackers made by {@link trackExecutors} in this spec file (jest gives each file its own module registry). */
const trackers = new Set<ResourceTracker>();

type Counts = ReadonlyMap<string, number>;

function countResources(): Counts {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) {
    if (!TRANSIENT.has(type)) counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return counts;
}

/** Import-time snapshot plus the hook timer; replaced by the exact snapshot taken in `beforeAll`. */
let baseline: Counts = new Map([...countResources()].concat([['Timeout', (countResources().get('Timeout') ?? 0) + 1]]));
beforeAll(() => {
  baseline = countResources();
});

function excess(): Map<string, number> {
  const extra = new Map<string, number>();
  for (const [type, n] of countResources()) {
    const over = n - (baseline.get(type) ?? 0);
    if (over > 0) extra.set(type, over);
  }
  return extra;
}

/** Best-effort description of live handles (node internal `_getActiveHandles`), for the failure message. */
function describeHandles(): string[] {
  const getHandles: unknown = Reflect.get(process, '_getActiveHandles');
  const handles: unknown = typeof getHandles === 'function' ? Reflect.apply(getHandles, process, []) : [];
  return (Array.isArray(handles) ? handles : []).map((handle: unknown) => {
    if (typeof handle !== 'object' || handle === null) return typeof handle;
    const name = handle.constructor.name;
    const fields: Record<string, unknown> = { ...handle };
    const detail = ['spawnfile', 'pid', 'remoteAddress', 'remotePort', 'localPort', '_connectionKey']
      .filter((key) => fields[key] !== undefined && typeof fields[key] !== 'object')
      .map((key) => `${key}=${String(fields[key])}`);
    return `${name}${detail.length > 0 ? ` (${detail.join(', ')})` : ''}`;
  });
}

/**
 * Fails unless the process holds no more sockets, servers, child processes, pipes or timers than at the
 * baseline. Everything still held by a {@link trackExecutors} tracker is stopped first; then handles that
 * are still closing get up to 2 s, polled with `setImmediate`. Registered once, for every spec file, by
 * `leak-check.ts`; call it yourself only at the end of a `describe` whose resources must be gone by then.
 */
export async function expectNoLeakedResources(): Promise<void> {
  // Tracked resources are not leaks: stop them first, so this hook may run before the trackers' own.
  for (const tracker of trackers) await tracker.stopAll();
  const deadline = Date.now() + SETTLE_LIMIT_MS;
  let extra = excess();
  while (extra.size > 0 && Date.now() < deadline) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    extra = excess();
  }
  if (extra.size === 0) return;
  const summary = [...extra].map(([type, n]) => `${n} × ${type}`).join(', ');
  throw new Error(`leaked resources: ${summary}\nlive handles:\n  ${describeHandles().join('\n  ')}`);
}

/** Anything a spec must shut down: executors (`stop`), servers, stubs and proxies (`close`). */
export type Disposable = { stop(): Promise<void> } | { close(): Promise<void> };

/** Collects resources and shuts them down, newest first. */
export interface ResourceTracker {
  /** Registers `resource` and returns it. */
  track<T extends Disposable>(resource: T): T;
  /** Stops/closes everything tracked, newest first; rethrows the first failure after trying all. */
  stopAll(): Promise<void>;
}

/** A tracker without hooks, for callers that manage their own `afterEach`/`afterAll`. */
export function createTracker(): ResourceTracker {
  const resources: Disposable[] = [];
  return {
    track: (resource) => {
      resources.push(resource);
      return resource;
    },
    stopAll: async () => {
      const failures: unknown[] = [];
      for (let resource = resources.pop(); resource !== undefined; resource = resources.pop()) {
        try {
          await ('stop' in resource ? resource.stop() : resource.close());
        } catch (error) {
          failures.push(error);
        }
      }
      if (failures.length > 0) throw failures[0];
    },
  };
}

/**
 * A tracker whose `stopAll` runs in an `afterAll` registered now (call it at module level) and also at the
 * start of every {@link expectNoLeakedResources}.
 */
export function trackExecutors(): ResourceTracker {
  const tracker = createTracker();
  trackers.add(tracker);
  afterAll(() => tracker.stopAll());
  return tracker;
}
