import { shortNodeName } from '../../cluster/broker/queue-leadership.js';
import type { NodeInfo } from '../../cluster/broker/management.js';
import {
  leaderOf,
  objectKey,
  objectName,
  readBroker,
  type BrokerSnapshot,
  type Endpoint,
  type QueueInfo,
  type SnapshotReader,
  type Unanswered,
} from '../../cluster/broker/snapshot.js';
import { Topology, type QueueRole } from '../../cluster/broker/topology.js';

/**
 * `rmq-bench watch`: one snapshot of the management API (takeWatchSnapshot), and a pure view
 * of it (watchView): per queue ready, unacked, delayed, rates, leader, online members; node
 * states; alerts. Rates are the management API's own (`message_stats.*_details.rate`) when it
 * reports them, else worked out from its counters between two snapshots. Growth alerts
 * compare with the oldest snapshot of a short window (the API refreshes its figures about
 * every 5 s, so consecutive 1 s snapshots are often equal).
 */

export interface WatchSnapshot {
  /** Wall clock, ms since the epoch. */
  atMs: number;
  answeredBy: Endpoint;
  unanswered: Unanswered[];
  broker: BrokerSnapshot;
}

export async function takeWatchSnapshot(reader: SnapshotReader, now: () => number = Date.now): Promise<WatchSnapshot> {
  const r = await readBroker(reader);
  return { atMs: now(), answeredBy: r.answeredBy, unanswered: r.unanswered, broker: r.snapshot };
}

export interface WatchQueueRow {
  vhost: string;
  name: string;
  type: string;
  role: QueueRole;
  ready: number | null;
  unacked: number | null;
  /** 4.3 delayed retry: messages waiting out their retry delay. */
  delayed: number | null;
  consumers: number | null;
  /** Messages per second; null when neither a rate nor two counters are known. */
  publishRate: number | null;
  deliverRate: number | null;
  ackRate: number | null;
  /** Short node name (rabbit2); null for a quorum queue without leader and for other types' absence. */
  leader: string | null;
  members: string[];
  online: string[];
}

export interface WatchNodeRow {
  name: string;
  running: boolean;
  memAlarm: boolean;
  diskAlarm: boolean;
  partitions: string[];
}

export const ALERT_KINDS = [
  'endpoint-down',
  'gap',
  'node-down',
  'alarm',
  'partition',
  'no-leader',
  'members-offline',
  'dlq-growing',
  'unacked-growing',
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

export interface WatchAlert {
  kind: AlertKind;
  object: string;
  message: string;
}

export interface WatchView {
  at: string;
  answeredBy: Endpoint;
  /** The node the API says it is (behind a load balancer the URL does not tell). */
  answeringNode: string | undefined;
  unanswered: Unanswered[];
  /** Time since the previous snapshot; null for the first one. */
  sincePreviousMs: number | null;
  /** How far back growth is measured (the oldest snapshot in the window); null with one snapshot. */
  comparedOverMs: number | null;
  cluster: { name: string | undefined; version: string | undefined };
  nodes: WatchNodeRow[];
  queues: WatchQueueRow[];
  alerts: WatchAlert[];
}

export interface WatchViewOptions {
  /** A gap alert when snapshots are further apart than this. */
  gapMs: number;
  /** Only queues whose name matches. */
  match?: RegExp | undefined;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function statRate(q: QueueInfo, prev: QueueInfo | undefined, dtS: number | null, stat: 'publish' | 'deliver_get' | 'ack'): number | null {
  const stats = q.message_stats ?? {};
  const details = stats[`${stat}_details`] as { rate?: unknown } | undefined;
  const rate = num(details?.rate);
  if (rate !== null) return rate;
  const now = num(stats[stat]);
  const before = num(prev?.message_stats?.[stat]);
  if (now !== null && before !== null && dtS !== null && dtS > 0) return Math.max(0, (now - before) / dtS);
  return null;
}

const qkey = (q: QueueInfo): string => objectKey(q.vhost, q.name);

/** The view of `cur`, with `history` (older snapshots, oldest first) for rates and growth. Pure. */
export function watchView(history: readonly WatchSnapshot[], cur: WatchSnapshot, options: WatchViewOptions): WatchView {
  const prev = history[history.length - 1];
  const oldest = history[0];
  const dtS = prev ? (cur.atMs - prev.atMs) / 1000 : null;
  const prevQueues = new Map((prev?.broker.queues ?? []).map((q) => [qkey(q), q]));
  const oldQueues = new Map((oldest?.broker.queues ?? []).map((q) => [qkey(q), q]));
  const topology = new Topology(cur.broker);
  const alerts: WatchAlert[] = snapshotAlerts(cur, prev, options.gapMs);

  const nodes: WatchNodeRow[] = cur.broker.nodes.map(nodeRow);
  for (const n of nodes) alerts.push(...nodeAlerts(n));

  const queues: WatchQueueRow[] = [];
  for (const q of cur.broker.queues) {
    if (options.match && !options.match.test(q.name)) continue;
    const eq = topology.queues.get(qkey(q))!;
    const row = queueRow(q, eq.type, topology.role(eq), prevQueues.get(qkey(q)), dtS);
    queues.push(row);
    if (eq.type === 'quorum') alerts.push(...leadershipAlerts(q));
    const old = oldQueues.get(qkey(q));
    if (old && oldest) alerts.push(...growthAlerts(q, row, old, cur.atMs - oldest.atMs));
  }
  queues.sort((a, b) => a.vhost.localeCompare(b.vhost) || a.name.localeCompare(b.name));
  alerts.sort((a, b) => ALERT_KINDS.indexOf(a.kind) - ALERT_KINDS.indexOf(b.kind) || a.object.localeCompare(b.object));

  return {
    at: new Date(cur.atMs).toISOString(),
    answeredBy: cur.answeredBy,
    answeringNode: cur.broker.overview.node,
    unanswered: cur.unanswered,
    sincePreviousMs: prev ? cur.atMs - prev.atMs : null,
    comparedOverMs: oldest ? cur.atMs - oldest.atMs : null,
    cluster: { name: cur.broker.overview.cluster_name, version: cur.broker.overview.rabbitmq_version ?? cur.broker.overview.product_version },
    nodes,
    queues,
    alerts,
  };
}

/** The watch's own alerts: an endpoint that does not answer, and a gap since the previous snapshot. Pure. */
function snapshotAlerts(cur: WatchSnapshot, prev: WatchSnapshot | undefined, gapMs: number): WatchAlert[] {
  const alerts: WatchAlert[] = [];
  for (const u of cur.unanswered) {
    alerts.push({
      kind: 'endpoint-down',
      object: `endpoint ${u.node}`,
      message: `${u.node} (${u.url}) has not answered since ${u.since.slice(11, 19)} (${u.error}); asking ${cur.answeredBy.node}`,
    });
  }
  if (prev && cur.atMs - prev.atMs > gapMs) {
    alerts.push({
      kind: 'gap',
      object: 'watch',
      message: `no data for ${((cur.atMs - prev.atMs) / 1000).toFixed(1)} s (since ${new Date(prev.atMs).toISOString().slice(11, 19)})`,
    });
  }
  return alerts;
}

function nodeRow(n: NodeInfo): WatchNodeRow {
  return {
    name: n.name,
    running: n.running,
    memAlarm: n.mem_alarm === true,
    diskAlarm: n.disk_free_alarm === true,
    partitions: n.partitions ?? [],
  };
}

/** A node down, in alarm or partitioned. Pure. */
function nodeAlerts(n: WatchNodeRow): WatchAlert[] {
  const alerts: WatchAlert[] = [];
  const obj = `node ${n.name}`;
  if (!n.running) alerts.push({ kind: 'node-down', object: obj, message: `${n.name} is not running` });
  if (n.memAlarm) alerts.push({ kind: 'alarm', object: obj, message: `memory alarm on ${n.name}: publishers are blocked` });
  if (n.diskAlarm) alerts.push({ kind: 'alarm', object: obj, message: `disk alarm on ${n.name}: publishers are blocked` });
  if (n.partitions.length > 0) alerts.push({ kind: 'partition', object: obj, message: `${n.name} is partitioned from ${n.partitions.join(', ')}` });
  return alerts;
}

/** One queue's row: its counts, its rates (against `prev`, dtS seconds older, where the API gives none), its leader and members. Pure. */
function queueRow(q: QueueInfo, type: string, role: QueueRole, prev: QueueInfo | undefined, dtS: number | null): WatchQueueRow {
  const leader = leaderOf(q);
  return {
    vhost: q.vhost,
    name: q.name,
    type,
    role,
    ready: num(q.messages_ready),
    unacked: num(q.messages_unacknowledged),
    delayed: num(q.messages_delayed),
    consumers: num(q.consumers),
    publishRate: statRate(q, prev, dtS, 'publish'),
    deliverRate: statRate(q, prev, dtS, 'deliver_get'),
    ackRate: statRate(q, prev, dtS, 'ack'),
    leader: leader ? shortNodeName(leader) : null,
    members: (q.members ?? []).map(shortNodeName),
    online: (q.online ?? []).map(shortNodeName),
  };
}

/** A quorum queue without a leader, or with members offline. Pure. */
function leadershipAlerts(q: QueueInfo): WatchAlert[] {
  const members = q.members ?? [];
  const online = q.online ?? [];
  if (members.length === 0) return [];
  const obj = objectName('queue', q.vhost, q.name);
  if (!leaderOf(q)) return [{ kind: 'no-leader', object: obj, message: `${q.name} has no leader: it accepts and delivers nothing` }];
  if (online.length >= members.length) return [];
  const off = members.filter((m) => !online.includes(m)).map(shortNodeName);
  return [{ kind: 'members-offline', object: obj, message: `${q.name}: ${online.length}/${members.length} members online (${off.join(', ')} offline)` }];
}

/** Against the oldest snapshot (`old`, overMs before): a dead-letter queue that grew, or unacked that grew with no ack. Pure. */
function growthAlerts(q: QueueInfo, row: WatchQueueRow, old: QueueInfo, overMs: number): WatchAlert[] {
  const alerts: WatchAlert[] = [];
  const obj = objectName('queue', q.vhost, q.name);
  const over = `${(overMs / 1000).toFixed(0)} s`;
  const depth = num(q.messages);
  const oldDepth = num(old.messages);
  if (row.role === 'dlq' && depth !== null && oldDepth !== null && depth > oldDepth) {
    alerts.push({ kind: 'dlq-growing', object: obj, message: `dead-letter queue ${q.name} grew by ${depth - oldDepth} in ${over} (now ${depth})` });
  }
  const oldUnacked = num(old.messages_unacknowledged);
  const acksBefore = num(old.message_stats?.ack) ?? 0;
  const acksNow = num(q.message_stats?.ack) ?? 0;
  if (row.unacked !== null && oldUnacked !== null && row.unacked > oldUnacked && acksNow <= acksBefore && (row.ackRate ?? 0) === 0) {
    alerts.push({ kind: 'unacked-growing', object: obj, message: `${q.name}: unacked grew from ${oldUnacked} to ${row.unacked} in ${over} with no ack` });
  }
  return alerts;
}

/** Keep the snapshots of the last windowMs (at least the latest one). Pure. */
export function trimHistory(history: readonly WatchSnapshot[], nowMs: number, windowMs: number): WatchSnapshot[] {
  const kept = history.filter((s) => nowMs - s.atMs <= windowMs);
  return kept.length > 0 ? kept : history.slice(-1);
}
