import type { FaultKind } from '../../faults/kinds.js';
import { shapeOf } from '../../faults/applied.js';
import { type FaultPhase, type LeaderFaultDriver, type LeaderFaultHandle, type LeaderFaultTimeline, startLeaderFault } from '../../faults/leader-fault-run.js';
import { shortNodeName } from '../../cluster/broker/queue-leadership.js';
import type { NetemSpec } from '../../faults/net/netem.js';
import { currentLeader, type QueueRef } from '../../cluster/broker/queue-leader-lookup.js';
import type { LeaderFault } from '../../faults/at-leader.js';
import { FAULTS } from '../../faults/registry.js';
import { waitForRejoin } from '../../faults/rejoin.js';
import type { Context } from '../../context.js';
import { InterruptedError, errorMessage } from '../../errors.js';
import { systemClock } from '../../util/retry.js';
import { type FaultRecord, type PlannedFault, pickIndex } from './chaos-plan.js';

/**
 * chaos's nemesis: every interval, the next planned fault on the node its target resolves to,
 * held for holdMs, healed, and the cluster awaited until whole again (every node running, every
 * chaos queue with all its members online). Each step is the shared leader-fault sequence
 * (startLeaderFault) with a driver that picks the node, so the restore is guaranteed on every way
 * out: finish() lets the fault on run to its end, close() heals at once.
 */

interface NemesisOptions {
  schedule: readonly PlannedFault[];
  queues: readonly QueueRef[];
  intervalMs: number;
  holdMs: number;
  rejoinTimeoutMs: number;
  /** The first fault starts this long after start(). */
  firstAtMs: number;
  netem?: NetemSpec | undefined;
  bandwidth?: string | undefined;
  /** Each producer's node now (Erlang name), undefined while it has no connection. */
  producerNodes: () => readonly (string | undefined)[];
  /** performance.now() of the run's start: the records' times are relative to it. */
  t0: number;
  /** A line for people when a fault starts, is healed, or the cluster is whole again. */
  onLine?: (line: string) => void;
}

interface ActiveFault {
  index: number;
  kind: FaultKind;
  nodes: string[];
  phase: FaultPhase;
}

export interface NemesisHandle {
  readonly history: readonly FaultRecord[];
  /** The fault on now, from its start until the cluster is whole again; null in calm. */
  active(): ActiveFault | null;
  /** Settles once every planned fault has run, been healed and the cluster is whole again (or the nemesis stopped). */
  readonly allRun: Promise<void>;
  /** Schedule no more faults; the one on (if any) is healed after its hold and awaited until whole. */
  finish(): Promise<void>;
  /** Heal the fault on at once and stop (Ctrl+C, an error elsewhere). Safe to call more than once. */
  close(): Promise<void>;
  /** Why the nemesis stopped early (a fault that could not be applied or healed), or null. */
  error(): string | null;
}

interface Resolved {
  nodeName: string;
  /** The members of a queue the node is in (of one it leads, if any): a fault of several members picks among them. */
  members: string[];
  reason: string;
  leaders: Record<string, string | null>;
  /** The leadership of a queue the node leads (else the first queue's), for the shared sequence. */
  before: LeaderFault['before'];
}

/** The queues' leaders now: by queue name (short names), and each queue's leadership in the order of `queues`. */
async function leadersOf(ctx: Context, queues: readonly QueueRef[]): Promise<{ map: Record<string, string | null>; list: LeaderFault['before'][] }> {
  const list: LeaderFault['before'][] = [];
  const map: Record<string, string | null> = {};
  for (const ref of queues) {
    const q = await currentLeader(ctx, ref);
    list.push(q);
    map[ref.queue] = shortNodeName(q.leader);
  }
  return { map, list };
}

/** The node a planned fault hits now, and the members of a queue it is in. */
async function resolveTarget(
  ctx: Context,
  planned: PlannedFault,
  queues: readonly QueueRef[],
  producerNodes: readonly (string | undefined)[],
): Promise<Resolved> {
  const { map: leaders, list } = await leadersOf(ctx, queues);
  const running = (await ctx.management.nodes()).filter((n) => n.running).map((n) => n.name);
  let nodeName: string;
  let reason: string;
  const pickNode = (): string => running[pickIndex(planned.pick, running.length)]!;
  if (planned.target === 'leader') {
    const i = pickIndex(planned.pick, queues.length);
    nodeName = list[i]!.leader;
    reason = `leader of ${queues[i]!.queue}`;
  } else if (planned.target === 'producer') {
    const connected = producerNodes.map((n, i) => ({ n, i })).filter((p): p is { n: string; i: number } => p.n !== undefined);
    if (connected.length === 0) {
      nodeName = pickNode();
      reason = 'random (no producer connected)';
    } else {
      const p = connected[pickIndex(planned.pick, connected.length)]!;
      nodeName = p.n;
      reason = `producer ${p.i + 1}'s node`;
    }
  } else {
    nodeName = pickNode();
    reason = 'random';
  }
  const led = list.find((q) => q.leader === nodeName);
  const before = led ?? list[0]!;
  // A queue the node is in: quorum-loss's second member comes from it, and that queue loses its majority.
  const members = (led ?? list.find((q) => q.members.includes(nodeName)) ?? list[0]!).members;
  return { nodeName, members, reason, leaders, before };
}

/** The fault on now: its sequence, what it is recording, and what was planned. */
interface CurrentFault {
  handle: LeaderFaultHandle;
  record: FaultRecord;
  planned: PlannedFault;
}

/**
 * The nemesis's state and steps: run() waits for each planned fault's turn and runs step() on
 * it; step() drives one fault through the shared sequence and fills in its FaultRecord.
 */
class Nemesis {
  readonly history: FaultRecord[] = [];
  /** Why the nemesis stopped early, or null. */
  stoppedBecause: string | null = null;
  /** Settles once run() has ended. */
  readonly done: Promise<void>;
  private readonly finishing = new AbortController();
  private readonly closing = new AbortController();
  /** Ctrl+C or close(): every wait of the nemesis stops, and the fault on is healed. */
  private readonly runSignal: AbortSignal;
  /** ctx with runSignal. */
  private readonly scoped: Context;
  private current: CurrentFault | undefined;

  constructor(
    private readonly ctx: Context,
    private readonly opts: NemesisOptions,
  ) {
    this.runSignal = AbortSignal.any([ctx.signal, this.closing.signal]);
    this.scoped = { ...ctx, signal: this.runSignal };
    this.done = this.run();
  }

  active(): ActiveFault | null {
    const c = this.current;
    if (!c) return null;
    return { index: c.planned.index, kind: c.planned.kind, nodes: c.record.nodes, phase: c.handle.timeline.phase };
  }

  async finish(): Promise<void> {
    this.finishing.abort();
    await this.done;
  }

  async close(): Promise<void> {
    this.closing.abort();
    await this.current?.handle.close();
    await this.done;
  }

  private say(line: string): void {
    this.opts.onLine?.(line);
  }

  /** A performance.now() time as ms since the run's start. */
  private rel(t: number | null): number | null {
    return t === null ? null : Math.round(t - this.opts.t0);
  }

  /** Each planned fault in turn, intervalMs after the previous one started, until all ran or the nemesis is stopped. */
  private async run(): Promise<void> {
    const started = performance.now();
    const untilOrStop = (at: number): Promise<void> =>
      systemClock.sleep(Math.max(0, at - performance.now()), AbortSignal.any([this.runSignal, this.finishing.signal])).catch(() => undefined);
    try {
      let nextAt = started + this.opts.firstAtMs;
      for (const planned of this.opts.schedule) {
        await untilOrStop(nextAt);
        if (this.finishing.signal.aborted || this.runSignal.aborted) return;
        const stepStart = performance.now();
        await this.step(planned);
        nextAt = stepStart + this.opts.intervalMs;
      }
    } catch (err) {
      if (!(err instanceof InterruptedError)) {
        this.stoppedBecause = errorMessage(err);
        this.say(`nemesis stopped: ${this.stoppedBecause}`);
      }
    }
  }

  /** One planned fault: applied, held, healed and awaited until the cluster is whole; throws when it could not be. */
  private async step(planned: PlannedFault): Promise<void> {
    const record = this.newRecord(planned);
    this.history.push(record);
    const handle = startLeaderFault(this.scoped, this.opts.queues[0]!, planned.kind, {
      restoreAfterMs: this.opts.holdMs,
      awaitElection: false,
      electionTimeoutMs: 0,
      rejoinTimeoutMs: this.opts.rejoinTimeoutMs,
      driver: this.driverFor(planned, record),
      onPhase: (phase, t) => {
        if (phase === 'restoring') this.say(`fault ${planned.index}: healing ${record.nodes.join(' and ')}`);
        if (phase === 'rejoined' && t.rejoinedAt !== null) this.say(`fault ${planned.index}: cluster whole again`);
      },
    });
    this.current = { handle, record, planned };
    const { timeline, error } = await handle.done;
    this.recordOutcome(record, timeline);
    this.current = undefined;
    if (error !== undefined) {
      if (error instanceof InterruptedError || this.runSignal.aborted) throw new InterruptedError();
      throw new Error(`fault ${planned.index} (${planned.kind}): ${timeline.error}`);
    }
    // The leaders once whole: which queues changed leader.
    record.leadersAfter = (await leadersOf(this.scoped, this.opts.queues).catch(() => ({ map: {} }))).map;
  }

  private newRecord(planned: PlannedFault): FaultRecord {
    return {
      index: planned.index,
      kind: planned.kind,
      target: planned.target,
      nodes: [],
      shape: null,
      reason: '',
      issuedAtMs: this.rel(performance.now())!,
      appliedAtMs: null,
      restoredAtMs: null,
      wholeAtMs: null,
      leadersBefore: {},
      leadersAfter: {},
      error: null,
    };
  }

  private recordOutcome(record: FaultRecord, timeline: Readonly<LeaderFaultTimeline>): void {
    record.appliedAtMs = this.rel(timeline.appliedAt);
    record.restoredAtMs = this.rel(timeline.restoredAt);
    record.wholeAtMs = this.rel(timeline.rejoinedAt);
    record.error = timeline.error;
  }

  /** The sequence's steps for a chaos fault: the node is resolved when the fault starts, no election is awaited. */
  private driverFor(planned: PlannedFault, record: FaultRecord): LeaderFaultDriver {
    return {
      fault: (kind, signal) => this.applyFault(planned, record, kind, signal),
      waitForNewLeader: () => Promise.reject(new Error('chaos awaits no election')),
      waitForRejoin: (lf, restoredAt, timeoutMs, signal) => waitForRejoin({ ...this.ctx, signal }, this.opts.queues, lf, { timeoutMs, restoredAt }),
    };
  }

  /** Resolve the planned target to a node and fault it (its spec's apply: quorum-loss takes a second member, kill-all every node). */
  private async applyFault(planned: PlannedFault, record: FaultRecord, kind: FaultKind, signal: AbortSignal): Promise<LeaderFault> {
    const { ctx, opts } = this;
    const r = await resolveTarget({ ...ctx, signal }, planned, opts.queues, opts.producerNodes());
    record.reason = r.reason;
    record.leadersBefore = r.leaders;
    const applied = await FAULTS[kind].apply(ctx, {
      node: r.nodeName,
      members: r.members,
      vhost: opts.queues[0]?.vhost ?? '/',
      options: {
        ...(opts.netem ? { netem: opts.netem } : {}),
        ...(opts.bandwidth ? { bandwidth: opts.bandwidth } : {}),
        pick: planned.pick2,
      },
      onLine: (line) => this.say(line),
    });
    const alsoFaulted = applied.alsoFaulted.map(shortNodeName);
    record.nodes = [shortNodeName(r.nodeName), ...alsoFaulted];
    record.shape = shapeOf(applied.fault);
    this.say(`fault ${planned.index}: ${kind} ${record.nodes.join(' and ')}${record.shape ? ` [${record.shape}]` : ''} (${r.reason})`);
    return { oldLeader: shortNodeName(r.nodeName), alsoFaulted, before: r.before, fault: applied.fault, node: r.nodeName };
  }
}

export function startNemesis(ctx: Context, opts: NemesisOptions): NemesisHandle {
  const nemesis = new Nemesis(ctx, opts);
  return {
    history: nemesis.history,
    allRun: nemesis.done,
    active: () => nemesis.active(),
    finish: () => nemesis.finish(),
    close: () => nemesis.close(),
    error: () => nemesis.stoppedBecause,
  };
}
