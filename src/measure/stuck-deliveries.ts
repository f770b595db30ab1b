import { formatDuration } from '../util/duration.js';

/**
 * Stuck deliveries: messages a queue keeps unacknowledged for a consumer that no live channel of
 * the run has (rabbitmq-server #15473: after a leader election, a quorum queue can hold messages
 * for a consumer whose channel is gone, and never deliver them again). After a fault, once the
 * run's own consumers have let go, every unacknowledged message of the queue is held for someone
 * else: a consumer whose channel the broker no longer lists (the bug), or one on a channel the
 * broker still lists although its client is gone without a close (until its heartbeat timeout).
 * The figure is how long until none is held: "redelivered after N s", or "still held" at the
 * deadline. What the management API says is read here; the looking is done by the scenario
 * (scenarios/under-faults/stuck-watch.ts). Pure.
 */

/** Who the queue holds messages for: one channel (or none that the broker still lists). */
export interface StuckHolder {
  /** The consumer tags the queue lists on that channel; empty: the queue counts a consumer no channel lists (its tag is not known). */
  consumerTags: string[];
  /** The channel's name as the management API gives it; null when no channel is listed for them. */
  channel: string | null;
  /**
   * true: the broker still lists the channel (its client gone without a close: the broker waits
   * for the heartbeat timeout); false: the channel is gone and the queue still holds messages for
   * its consumer (#15473).
   */
  channelListed: boolean;
  /** The node of the channel (short name), or null when unknown. */
  node: string | null;
  /** Messages unacknowledged for it. */
  count: number;
}

/** One look at a queue. */
export interface StuckLook {
  /** The queue's unacknowledged messages, less those of the run's own live channels. */
  held: number;
  /** Who holds them; their counts add up to held. */
  holders: StuckHolder[];
  /** The queue's leader (short name), or null when none answered. */
  leader: string | null;
  /**
   * The queue's `reductions` as the record gives them: written with its message counts each time
   * the queue reports them (its statistics tick), so a new value means counts taken since the
   * last look. null when the record has none.
   */
  stamp: number | null;
}

/** The figure of one run, as the --json document carries it. */
export interface StuckDeliveries {
  queue: string;
  /**
   * none: nothing held at the first look; redelivered: held at first, none left after afterMs;
   * held: still held at the deadline; unknown: no look could be judged by the deadline (the
   * management API did not answer, or gave no figures taken since the let-go): not measured.
   */
  outcome: 'none' | 'redelivered' | 'held' | 'unknown';
  /**
   * From the holder letting go (the fault healed) to the first judged look with nothing held
   * (none: the first judged look); held: to the last look, past deadlineMs. Its resolution: the
   * look's 0.5 s with the queue's live count (liveCount), else the queue's statistics tick (5 s by
   * default).
   */
  afterMs: number;
  /** --max-stuck: how long the run waited. */
  deadlineMs: number;
  /** How many deliveries the run's holder consumer took (and never acknowledged) before it let go. */
  holderTook: number;
  /** The most messages held at one judged look. */
  mostHeld: number;
  /** Who held them: at the first judged look that saw any (for 'held', the last look). */
  holders: StuckHolder[];
  /** The queue's leader (short name) at that look. */
  leader: string | null;
  /**
   * The held counts are the quorum queue's own, read live in its member (rmq-bench's cluster);
   * false: the management API's. Who holds them is the management API's either way.
   */
  liveCount: boolean;
}

/** The default of --max-stuck: well past a healthy requeue (well under a second), short of the 60 s heartbeat's timeout of a silent client. */
export const DEFAULT_MAX_STUCK_MS = 30_000;

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const objs = (v: unknown): Record<string, unknown>[] =>
  Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null) : [];
const short = (node: string | null): string | null => (node === null ? null : node.slice(node.indexOf('@') + 1));

/**
 * Who a queue holds its unacknowledged messages for, from its management record
 * (/api/queues/<vhost>/<name>: messages_unacknowledged, consumer_details, leader or node) and
 * the channels the broker lists (/api/channels: name, node, messages_unacknowledged). The
 * channels in `own` are the run's own live ones: what they hold is not stuck. A listed channel
 * holds at most its own unacknowledged count (a channel's count covers every queue it consumes
 * from); what no listed channel accounts for is held for consumers whose channels are gone.
 */
export function lookAtQueue(queue: Readonly<Record<string, unknown>>, channels: readonly unknown[], own: ReadonlySet<string> = new Set()): StuckLook {
  const listed = new Map(objs(channels).map((c) => [str(c.name) ?? '', c]));
  const leader = short(str(queue.leader) ?? str(queue.node));
  const byChannel = new Map<string, { tags: string[]; node: string | null }>();
  for (const d of objs(queue.consumer_details)) {
    const ch = typeof d.channel_details === 'object' && d.channel_details !== null ? (d.channel_details as Record<string, unknown>) : {};
    const name = str(ch.name) ?? '';
    const entry = byChannel.get(name) ?? { tags: [], node: short(str(ch.node)) };
    const tag = str(d.consumer_tag);
    if (tag !== null) entry.tags.push(tag);
    byChannel.set(name, entry);
  }
  let left = num(queue.messages_unacknowledged);
  // The run's own channels first: what they hold is theirs.
  for (const name of own) left -= Math.min(left, num(listed.get(name)?.messages_unacknowledged));
  const holders: StuckHolder[] = [];
  const gone: { tags: string[]; channel: string | null; node: string | null }[] = [];
  for (const [name, { tags, node }] of byChannel) {
    if (own.has(name)) continue;
    const channel = name === '' ? null : name;
    const c = listed.get(name);
    if (c === undefined || name === '') {
      gone.push({ tags, channel, node });
      continue;
    }
    const count = Math.min(left, num(c.messages_unacknowledged));
    left -= count;
    if (count > 0) holders.push({ consumerTags: tags, channel, channelListed: true, node: short(str(c.node)) ?? node, count });
  }
  if (left > 0) {
    const g = gone[0];
    holders.push({
      consumerTags: gone.flatMap((x) => x.tags),
      channel: gone.length === 1 && g ? g.channel : null,
      channelListed: false,
      node: gone.length === 1 && g ? g.node : null,
      count: left,
    });
  }
  const stamp = typeof queue.reductions === 'number' && Number.isFinite(queue.reductions) ? queue.reductions : null;
  return { held: holders.reduce((a, h) => a + h.count, 0), holders, leader, stamp };
}

/**
 * The management API's figures of a queue lag behind it: the queue reports its counts on each
 * statistics tick (collect_statistics_interval, 5 s by default, later on a loaded node), so a
 * look soon after the holder lets go can still show what the queue held before (or, on a queue
 * just declared, nothing yet). A look is judged once its stamp differs from the first look's
 * (counts taken since the let-go); on a record without a stamp, from STATS_LAG_MS on.
 * --max-stuck cannot be shorter than STATS_LAG_MS.
 */
export const STATS_LAG_MS = 5_500;

/**
 * A stamp that has not changed for this long is judged all the same: an idle classic queue stops
 * reporting (its statistics are sent only when something changed), so its figures are as new as
 * they will get. Letting go of the holder's messages is a change, and is reported within a tick.
 */
export const UNCHANGED_STAMP_MS = 2 * STATS_LAG_MS;

/** What the watch has seen so far, of the looks it judged. */
export interface WatchState {
  /** The first look's stamp; undefined before the first look. */
  firstStamp: number | null | undefined;
  /** A look was judged: every later one is. */
  fresh: boolean;
  /** A judged look saw messages held. */
  sawHeld: boolean;
  /**
   * The look that names who held them: the first that saw messages held, replaced by the first
   * whose figures the management API took since the let-go (seenFresh), or by one that names
   * someone where it named no one; the last one for 'held'.
   */
  seen: StuckLook | null;
  seenFresh: boolean;
  mostHeld: number;
}

export const WATCH_START: WatchState = { firstStamp: undefined, fresh: false, sawHeld: false, seen: null, seenFresh: false, mostHeld: 0 };

/** Whether a look is judged (see STATS_LAG_MS), and the state that remembers it. Pure. */
function judge(state: WatchState, look: StuckLook | null, elapsedMs: number): WatchState {
  if (state.fresh) return state;
  const stamp = look?.stamp ?? null;
  if (state.firstStamp === undefined) return { ...state, firstStamp: look ? stamp : undefined };
  const fresh =
    stamp !== null && state.firstStamp !== null ? stamp !== state.firstStamp || elapsedMs >= UNCHANGED_STAMP_MS : look !== null && elapsedMs >= STATS_LAG_MS;
  return fresh ? { ...state, fresh } : state;
}

/** One look of the watch: the management API's (null: it did not answer), and the queue's own count of messages checked out to consumers, read live in its member (null: not known: not a quorum queue, not rmq-bench's cluster, no answer). */
export interface WatchLook {
  stats: StuckLook | null;
  liveHeld: number | null;
}

/**
 * The watch after one look, elapsedMs after the holder let go: go on looking, or end with an
 * outcome. With the queue's live count, every look is judged by it (the management API's only
 * names who holds them); without, only looks the management API took since the let-go count
 * (judge). The looks that name who holds them are those whose count agrees with the live one,
 * where it is known. Clear when a judged look shows nothing held (redelivered, or none if no judged look
 * saw any); still held past deadlineMs: 'held'; no judged look by then: 'unknown'. A look that
 * did not answer is not clear. Pure.
 *
 * The queue's live consumer count (a passive declare) would say "clear" sooner, but a quorum
 * queue's count leaves out a consumer it suspects is down, the very consumer #15473 is about: it
 * is not used.
 */
export function stepWatch(
  state: WatchState,
  { stats, liveHeld }: WatchLook,
  elapsedMs: number,
  deadlineMs: number,
): { state: WatchState; next: 'wait' | StuckDeliveries['outcome'] } {
  const judged = judge(state, stats, elapsedMs);
  const overdue = elapsedMs > deadlineMs;
  const next = overdue ? 'held' : 'wait';
  const held = liveHeld ?? (judged.fresh ? (stats?.held ?? null) : null);
  // Past the deadline without a judged figure: held if one ever showed messages held, else not measured.
  if (held === null) return { state: judged, next: overdue ? (judged.sawHeld ? 'held' : 'unknown') : 'wait' };
  if (held === 0) return { state: judged, next: judged.sawHeld ? 'redelivered' : 'none' };
  const look = stats ?? { held, holders: [], leader: null, stamp: null };
  // With the live count, a look of the API names the holders only once its count agrees: a new
  // stamp can still carry the counts of before the let-go (the queue reports them on its own tick).
  const fresh = stats !== null && (liveHeld === null ? judged.fresh : stats.held === liveHeld);
  const better =
    judged.seen === null ||
    (next === 'held' && (fresh || !judged.seenFresh)) ||
    (fresh && !judged.seenFresh) ||
    (judged.seen.holders.length === 0 && look.holders.length > 0 && (fresh || !judged.seenFresh));
  return {
    state: {
      ...judged,
      sawHeld: true,
      seen: better ? look : judged.seen,
      seenFresh: better ? fresh : judged.seenFresh,
      mostHeld: Math.max(judged.mostHeld, held),
    },
    next,
  };
}

/** One holder in words: "5 for consumer amq.ctag-1 on channel 172.20.0.1:40000 -> 172.20.0.2:5672 (1) (gone) on rabbit1". Pure. */
export function holderText(h: StuckHolder): string {
  const tags = h.consumerTags.length === 0 ? 'a consumer no channel lists' : `consumer ${h.consumerTags.join(', ')}`;
  const channel = h.channel === null ? '' : ` on channel ${h.channel}`;
  const state = h.channelListed ? ' (the broker still lists the channel)' : ' (its channel gone)';
  return `${h.count} for ${tags}${channel}${state}${h.node === null ? '' : ` on ${h.node}`}`;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** The figure in one line. Pure. */
export function stuckText(s: StuckDeliveries): string {
  const about = (who: string): string => {
    const parts = [who, s.leader === null ? '' : `queue leader ${s.leader}`].filter((p) => p !== '');
    return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
  };
  if (s.outcome === 'unknown') return `${s.queue}: not measured: no figures of the queue taken since the run's holder let go came within ${seconds(s.afterMs)}`;
  if (s.outcome === 'none') return `${s.queue}: none held ${seconds(s.afterMs)} after the run's holder let go of the ${s.holderTook} it took`;
  const who = s.holders.map(holderText).join('; ');
  if (s.outcome === 'redelivered') return `${s.queue}: ${s.mostHeld} held, redelivered within ${seconds(s.afterMs)}${about(who)}`;
  const held = s.holders.length === 0 ? s.mostHeld : s.holders.reduce((a, h) => a + h.count, 0);
  return `${s.queue}: ${held} STILL HELD after ${seconds(s.afterMs)}, past --max-stuck ${formatDuration(s.deadlineMs)}${about(who)}`;
}

/** Why the figure fails the verdict, naming the queue; null when it does not. Pure. */
export function stuckProblem(s: StuckDeliveries | null | undefined): string | null {
  if (s?.outcome !== 'held') return null;
  return `deliveries stuck: ${stuckText(s)}`;
}
