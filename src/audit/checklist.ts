import type { BrokerSnapshot } from '../cluster/broker/snapshot.js';
import { Topology } from '../cluster/broker/topology.js';
import { CHECK_IDS, type AuditItem, type AuditOptions, type AuditStatus, type Check, type CheckId } from './check.js';
import { alarms, clusterSize, featureFlags, nodeRunning, partitions, unroutableDropped } from './checks/cluster.js';
import { consumerTimeout } from './checks/consumers.js';
import { deadLetterStrategy, deliveryLimit, dlxConfigured, dlxRoute, requeueLoop, retryLoop } from './checks/dead-letters.js';
import { exchangeDurable } from './checks/exchanges.js';
import { mirroringPolicy, policyShadowed } from './checks/policies.js';
import { dlqMessages, noConsumers, queueDurable, quorumMembers, queueType, streamRetentionCheck, unacked, unackedUnexplained } from './checks/queues.js';

/**
 * The checklist of both articles: every check, in CHECK_IDS order (test/unit/audit-checks.test.ts
 * holds the two lists together). Each check is pure, over one snapshot and its topology.
 */
export const CHECKS: readonly Check[] = [
  queueDurable,
  queueType,
  mirroringPolicy,
  exchangeDurable,
  dlxConfigured,
  dlxRoute,
  deliveryLimit,
  requeueLoop,
  deadLetterStrategy,
  policyShadowed,
  retryLoop,
  clusterSize,
  nodeRunning,
  partitions,
  alarms,
  featureFlags,
  unroutableDropped,
  quorumMembers,
  streamRetentionCheck,
  dlqMessages,
  unacked,
  unackedUnexplained,
  noConsumers,
  consumerTimeout,
];

export function checkById(id: CheckId): Check | undefined {
  return CHECKS.find((c) => c.id === id);
}

const ORDER: Record<AuditStatus, number> = { fail: 0, warn: 1, pass: 2 };

/** The checklist over one snapshot: fails first, then warnings, then passes; by check, then object. Pure. */
export function auditChecks(snapshot: BrokerSnapshot, options: AuditOptions): AuditItem[] {
  const t = new Topology(snapshot);
  const items = CHECKS.flatMap((c) => c.run(snapshot, t, options));
  return items.sort((a, b) => ORDER[a.status] - ORDER[b.status] || CHECK_IDS.indexOf(a.id) - CHECK_IDS.indexOf(b.id) || a.object.localeCompare(b.object));
}
