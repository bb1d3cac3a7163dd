/**
 * The lab's executors: real `codex exec-server --remote <balancer> --remote-transport direct --aws-sigv4`
 * (spawned as `src/executor/spawn-executor.ts` does), one per environment, registering with the
 * balancer's url. An executor is stopped only by the nemesis (a restart: SIGTERM, its processes die with
 * it, then it starts again with the same environment id) or at the end; any other exit is recorded as
 * unexpected, with its status and last stderr lines (an invariant: executors exit only when the nemesis
 * kills them).
 */
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';
import { spawnExecutor } from '../../src/executor/spawn-executor';
import { sleep } from './time';

/** An exit of an executor that the nemesis did not ask for. */
export interface UnexpectedExit {
  readonly environmentId: string;
  readonly at: number;
  readonly code: number | null;
  readonly signal: string | null;
  /** Its last stderr lines. */
  readonly stderr: readonly string[];
}

/** What the executors need to register. */
export interface ExecutorCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** One environment's executor across its restarts. */
class LabExecutor {
  current: SpawnedExecutor | undefined;
  starts = 0;
  private stopping = false;

  constructor(
    readonly environmentId: string,
    private readonly pool: LabExecutors,
  ) {}

  async start(): Promise<void> {
    const executor = await spawnExecutor({
      mode: 'direct',
      remoteUrl: this.pool.remoteUrl,
      environmentId: this.environmentId,
      credentials: this.pool.credentials,
    });
    this.current = executor;
    this.starts += 1;
    this.stopping = false;
    void executor.exited.then((exit) => {
      if (this.stopping || this.current !== executor) return;
      this.pool.unexpected.push({ environmentId: this.environmentId, at: Date.now(), code: exit.code, signal: exit.signal, stderr: executor.stderrLines().slice(-8) });
    });
  }

  /** SIGTERM (its processes die with it); resolves once it exited. */
  async stop(): Promise<void> {
    const executor = this.current;
    if (executor === undefined) return;
    this.stopping = true;
    await executor.stop();
    this.current = undefined;
  }
}

/** The lab's executors (see the module's doc). */
export class LabExecutors {
  readonly unexpected: UnexpectedExit[] = [];
  private readonly byId = new Map<string, LabExecutor>();

  constructor(
    readonly remoteUrl: string,
    readonly credentials: ExecutorCredentials,
  ) {}

  /** The environment ids, in the order started. */
  get ids(): string[] {
    return [...this.byId.keys()];
  }

  /** Starts an executor for each id. */
  async start(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const executor = new LabExecutor(id, this);
      this.byId.set(id, executor);
      await executor.start();
    }
  }

  /** The nemesis's restart: SIGTERM, `downMs` later a new executor with the same environment id. */
  async restart(id: string, downMs: number): Promise<void> {
    const executor = this.byId.get(id);
    if (executor === undefined) throw new Error(`no executor for ${id}`);
    await executor.stop();
    await sleep(downMs);
    await executor.start();
  }

  /** How many times each id's executor was started. */
  starts(id: string): number {
    return this.byId.get(id)?.starts ?? 0;
  }

  /** Whether `id`'s executor runs now. */
  running(id: string): boolean {
    const child = this.byId.get(id)?.current?.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  /** Stops every executor (their processes die with them). Never rejects. */
  async stopAll(): Promise<void> {
    await Promise.allSettled([...this.byId.values()].map((executor) => executor.stop()));
  }
}
