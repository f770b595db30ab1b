import type { EffectiveQueue } from '../cluster/broker/policy.js';
import { objectName, type BrokerSnapshot, type QueueInfo } from '../cluster/broker/snapshot.js';
import type { QueueRole, Topology } from '../cluster/broker/topology.js';

/**
 * What a check of the audit checklist is, and what it yields. The checks themselves are in
 * ./checks/, listed in order in ./checklist.ts.
 */

/** Every check's id, in the order items of one status are listed (and --json sorts them). */
export const CHECK_IDS = [
  'queue-durable',
  'queue-type',
  'mirroring-policy',
  'exchange-durable',
  'dlx-configured',
  'dlx-route',
  'delivery-limit',
  'requeue-loop',
  'dead-letter-strategy',
  'policy-shadowed',
  'retry-loop',
  'cluster-size',
  'node-running',
  'partitions',
  'alarms',
  'feature-flags',
  'unroutable-dropped',
  'quorum-members',
  'stream-retention',
  'dlq-messages',
  'unacked',
  'unacked-unexplained',
  'no-consumers',
  'consumer-timeout',
] as const;
export type CheckId = (typeof CHECK_IDS)[number];

export type AuditStatus = 'pass' | 'warn' | 'fail';

export interface AuditItem {
  id: CheckId;
  status: AuditStatus;
  /** What it concerns: `queue demo.orders`, `exchange demo.dlx`, `node rabbit@rabbit1`... */
  object: string;
  message: string;
  /** How to fix it; null when it passes. */
  fix: string | null;
}

export interface AuditOptions {
  /** A queue with this many unacked messages or more is flagged. */
  maxUnacked: number;
}

/** One item of the checklist: pure, over one snapshot and its topology; it yields items with its own id only. */
export interface Check {
  id: CheckId;
  /** What it asks, in a few words (for whoever reads the list; not printed). */
  title: string;
  /** A note: exposure the audit cannot judge from the broker's side (how consumers behave), said on an item that passes. */
  note?: true;
  run(snapshot: BrokerSnapshot, topology: Topology, options: AuditOptions): AuditItem[];
}

export const pass = (id: CheckId, object: string, message: string): AuditItem => ({ id, status: 'pass', object, message, fix: null });
export const warn = (id: CheckId, object: string, message: string, fix: string): AuditItem => ({ id, status: 'warn', object, message, fix });
export const fail = (id: CheckId, object: string, message: string, fix: string): AuditItem => ({ id, status: 'fail', object, message, fix });

export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

interface AuditedQueue {
  eq: EffectiveQueue;
  queue: QueueInfo;
  /** `queue demo.orders`: the item's object. */
  object: string;
  role: QueueRole;
}

/**
 * The queues the queue checks look at, in the snapshot's order. Exclusive queues are left out:
 * one lives and dies with its connection, by design. `streams: false` leaves out streams too,
 * for the checks that do not apply to them (no dead-lettering, no delivery limit).
 */
export function auditedQueues(t: Topology, options: { streams: boolean }): AuditedQueue[] {
  return [...t.queues.values()]
    .filter((eq) => !eq.queue.exclusive && (options.streams || eq.type !== 'stream'))
    .map((eq) => ({ eq, queue: eq.queue, object: objectName('queue', eq.queue.vhost, eq.queue.name), role: t.role(eq) }));
}
