/**
 * The workload that runs through a schedule, through HAProxy's url: per environment a stream of known
 * lines and an echo of its stdin (each stdin line unique, written with a write id, retried through faults
 * with the same id); keyed starts of short processes all along (some sent again once answered). Each
 * process is watched from its start: a live reader (one that moves between replicas mid-stream, straight
 * to them and resuming by seq, for a long process; one through the balancer for a short one), then, as
 * soon as it ended, late readers from the start (through the balancer, and on each replica for a long
 * one) and the API's last word on it. It keeps its own history (`./history`) for the invariants.
 */
import { randomBytes } from 'node:crypto';
import { follow } from './event-reader';
import type { Place } from './event-reader';
import type { History, PlannedProcess, ReaderHistory, StdinHistory, TrackedProcess } from './history';
import type { Call, Retried, RetryOptions, Target } from './http';
import { codeOf, jsonOf, retrying } from './http';
import type { Lab } from './lab';
import type { Caller } from './plans';
import { echoPlan, keyedStart, processesPath, shortPlan, streamPlan } from './plans';
import type { Prng } from './prng';
import { sleep } from './time';

/** What the workload runs for. */
export interface WorkloadOptions {
  readonly lab: Lab;
  readonly environments: readonly string[];
  readonly random: Prng;
  /** How long the schedule lasts (ms): the streams outlast it. */
  readonly lengthMs: number;
  /**
   * `cluster` (default): a call that the balancer's replica answers 503 (ENVIRONMENT_ELSEWHERE …) is tried
   * again on each replica's own url, as `HostClient` given every url does; `balancer`: through the balancer
   * alone (its `leastconn` may send every retry to the same replica).
   */
  readonly via?: 'cluster' | 'balancer';
}

/** The workload (see the module's doc). */
export class Workload {
  readonly history: History = { starts: [], processes: [], stdins: [], readers: [], refusedReads: [] };
  /** The schedule is over: no more writes or short starts. */
  private ending = false;
  /** The run is being torn down: everything stops. */
  private aborted = false;
  /** When watching gives up (set once the workload ends). */
  private deadline = Number.MAX_SAFE_INTEGER;
  private readonly loops: Promise<void>[] = [];
  private readonly watchers: Promise<void>[] = [];
  private readonly caller: Caller;
  private shorts = 0;

  constructor(private readonly options: WorkloadOptions) {
    const balancer = { where: 'balancer', base: options.lab.url };
    const targets = (): Target[] => (options.via === 'balancer' ? [balancer] : [balancer, ...this.replicas()]);
    const who = (replicaId: string): string | undefined => options.lab.replicaOf(replicaId)?.who;
    this.caller = { base: options.lab.url, targets, token: options.lab.token, who, stopping: () => this.aborted };
  }

  /** Starts the long processes (their stdin writers) and the keyed starts of short ones. */
  async begin(): Promise<void> {
    const { environments, random, lengthMs } = this.options;
    const lines = Math.ceil(((lengthMs + 10_000) / 1000) * 20);
    await Promise.all(
      environments.map(async (id, n) => {
        await this.start(streamPlan(id, `${id}-stream`, lines, 10 + n), false);
        const echo = await this.start(echoPlan(id, `${id}-echo`, 20 + n), false);
        if (echo !== undefined) this.loops.push(this.writer(echo, random.fork(`stdin-${id}`)));
      }),
    );
    this.loops.push(this.shortStarts(random.fork('shorts')));
  }

  /** Ends the stdin writes and the keyed starts, ends each stdin, and waits (up to `deadlineMs`) for every process to be watched to its end. */
  async finish(deadlineMs: number): Promise<void> {
    this.ending = true;
    await Promise.all(this.loops);
    await Promise.all(
      this.history.stdins.map(async (stdin) => {
        const sent = await this.send(`${processesPath(stdin.environmentId)}/${encodeURIComponent(stdin.processId)}/stdin/end`, { method: 'POST', deadlineMs: 20_000 });
        stdin.ended = sent.answer?.status === 200 || sent.answer?.status === 204;
        stdin.endTrail.push(...sent.trail);
      }),
    );
    this.deadline = Date.now() + deadlineMs;
    await Promise.all(this.watchers);
  }

  /** Stops every loop and reader at once (a run that is being torn down). */
  abort(): void {
    this.aborted = true;
  }

  /** Resolves once every loop and watcher has returned (after {@link abort}, within a request's timeout). */
  async quiet(): Promise<void> {
    await Promise.allSettled([...this.loops, ...this.watchers]);
  }

  private replicas(): Place[] {
    return [...this.options.lab.slots.keys()].map((name) => this.options.lab.proc(name)).map((proc) => ({ where: proc.who, base: proc.base }));
  }

  /** One call of the operator API, retried (see `retrying`) until the deadline or the run's abort. */
  private send(path: string, options: Call & RetryOptions): Promise<Retried> {
    const headers = { authorization: `Bearer ${this.caller.token}` };
    return retrying(this.caller.targets, path, { ...options, headers, who: this.caller.who, stop: () => this.aborted });
  }

  /** A keyed start of `plan` (on START_UNKNOWN, again with a new key and tag); once started, it is watched. */
  private async start(plan: PlannedProcess, replay: boolean): Promise<TrackedProcess | undefined> {
    for (let round = 1; round <= 3 && !this.aborted; round++) {
      const tag = round === 1 ? plan.tag : `${plan.tag}-r${round}`;
      const retag = (text: string): string => text.split(plan.tag).join(tag);
      const tagged = { ...plan, tag, argv: plan.argv.map((arg) => (arg === plan.tag ? tag : arg)), expected: plan.expected === undefined ? undefined : retag(plan.expected) };
      const start = await keyedStart(this.caller, tagged, `key-${tag}-${randomBytes(3).toString('hex')}`, this.history.starts, replay);
      const processId = start.ids[0];
      if (start.outcome === 'started' && processId !== undefined) {
        const tracked: TrackedProcess = { plan: tagged, start, processId, startedAt: start.lastAt };
        this.history.processes.push(tracked);
        this.watchers.push(this.watch(tracked));
        return tracked;
      }
      if (start.outcome !== 'unknown') return undefined;
    }
    return undefined;
  }

  /** Keyed starts of short processes, one every 0.8 to 2.5 s, until the schedule is over (at most 4 in flight). */
  private async shortStarts(random: Prng): Promise<void> {
    const inFlight = new Set<Promise<unknown>>();
    while (!this.ending && !this.aborted) {
      const id = random.pick(this.options.environments);
      const n = ++this.shorts;
      const started = this.start(shortPlan(id, `${id}-short${n}`, random.int(3, 20), random.int(0, 9)), random.chance(0.3));
      inFlight.add(started);
      void started.finally(() => inFlight.delete(started));
      await sleep(random.int(800, 2_500));
      while (inFlight.size >= 4 && !this.ending) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  }

  /** Writes unique lines to an echo's stdin, one every 0.15 to 0.5 s, each retried with its write id, until the schedule is over or one is refused. */
  private async writer(tracked: TrackedProcess, random: Prng): Promise<void> {
    const stdin: StdinHistory = { processId: tracked.processId, environmentId: tracked.plan.environmentId, writes: [], ended: false, endTrail: [] };
    this.history.stdins.push(stdin);
    const path = `${processesPath(stdin.environmentId)}/${encodeURIComponent(stdin.processId)}/stdin`;
    for (let n = 1; !this.ending && !this.aborted; n++) {
      const line = `${tracked.plan.tag} w${String(n).padStart(4, '0')} ${randomBytes(6).toString('hex')}\n`;
      const write = { writeId: `${tracked.plan.tag}-w${n}`, line, sentAt: Date.now(), attempts: 0, trail: [] as string[], outcome: 'pending' as 'pending' | 'accepted' | 'failed' };
      stdin.writes.push(write);
      const json = { writeId: write.writeId, data: Buffer.from(line).toString('base64') };
      const sent = await this.send(path, { method: 'POST', json, deadlineMs: 25_000 });
      write.attempts = sent.attempts;
      write.trail.push(...sent.trail);
      write.outcome = sent.answer?.status === 200 ? 'accepted' : 'failed';
      if (write.outcome === 'failed') return;
      await sleep(random.int(150, 500));
    }
  }

  /**
   * Watches `tracked` from its start: a live reader to its end (a mover for a long process, through the
   * balancer for a short one), then late readers from seq 1 (the balancer, and each replica for a long
   * one, four at a time) and the API's last word on it.
   */
  private async watch(tracked: TrackedProcess): Promise<void> {
    const balancer: Place = { where: 'balancer', base: this.caller.base };
    if (tracked.plan.role === 'short') await this.read(tracked, 'live@balancer', () => balancer);
    else await this.mover(tracked);
    const live = this.history.readers.find((reader) => reader.processId === tracked.processId);
    if (live !== undefined && live.outcome !== 'gave up') tracked.endedAt = Date.now();
    const places = tracked.plan.role === 'short' ? [balancer] : [balancer, ...this.replicas()];
    await Promise.all(places.map((place) => this.read(tracked, `late@${place.where}`, () => place, Date.now() + 30_000)));
    await this.settle(tracked);
  }

  /** A reader of `tracked` that moves to another replica every 1.5 to 4 s, straight to each, until the process ended. */
  private mover(tracked: TrackedProcess): Promise<void> {
    const random = this.options.random.fork(`mover-${tracked.plan.tag}`);
    const next = (segments: readonly { readonly where: string }[]): Place => {
      const last = segments.at(-1)?.where.split('#')[0];
      return random.pick(this.replicas().filter((place) => place.where.split('#')[0] !== last));
    };
    return this.read(tracked, 'mover', next, undefined, () => random.int(1_500, 4_000));
  }

  private async read(tracked: TrackedProcess, name: string, next: (segments: readonly { readonly where: string }[]) => Place, until?: number, move?: () => number): Promise<void> {
    const reader: ReaderHistory = { name, processId: tracked.processId, environmentId: tracked.plan.environmentId, events: [], segments: [], outcome: '' };
    this.history.readers.push(reader);
    await follow(reader, {
      token: this.caller.token,
      idleMs: 6_000,
      openTimeoutMs: 4_000,
      next: (segments) => next(segments),
      deadline: () => Math.min(until ?? Number.MAX_SAFE_INTEGER, this.deadline),
      stop: () => this.aborted,
      ...(move === undefined ? {} : { moveEvery: move }),
    });
  }

  /** The API's last word on `tracked`: state, exit code, error (reads refused as another replica's are recorded). */
  private async settle(tracked: TrackedProcess): Promise<void> {
    const path = `${processesPath(tracked.plan.environmentId)}/${encodeURIComponent(tracked.processId)}`;
    const sent = await this.send(path, { deadlineMs: 10_000 });
    for (const step of sent.trail) if (step.endsWith(' 503 ENVIRONMENT_ELSEWHERE')) this.history.refusedReads.push(`${step.split(' ')[0] ?? ''} GET ${path}`);
    const body = sent.answer === undefined ? undefined : jsonOf(sent.answer);
    if (sent.answer?.status !== 200 || typeof body !== 'object' || body === null) {
      tracked.final = { state: `answer ${sent.answer?.status ?? sent.error ?? '?'}`, exitCode: null, error: sent.answer === undefined ? null : (codeOf(sent.answer) ?? null) };
      return;
    }
    const fields = body as Record<string, unknown>;
    const error = typeof fields['error'] === 'object' && fields['error'] !== null ? JSON.stringify(fields['error']) : null;
    tracked.final = { state: String(fields['state']), exitCode: typeof fields['exitCode'] === 'number' ? fields['exitCode'] : null, error };
    if (tracked.endedAt === undefined && ['closed', 'lost', 'failed'].includes(tracked.final.state)) tracked.endedAt = Date.now();
  }
}
