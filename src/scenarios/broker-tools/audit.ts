import { auditChecks } from '../../audit/checklist.js';
import type { AuditItem, AuditOptions, AuditStatus } from '../../audit/check.js';
import { type VersionItem, versionItems } from '../../audit/version-items.js';
import { readBroker, SnapshotReader, type BrokerSnapshot, type Endpoint, type Unanswered } from '../../cluster/broker/snapshot.js';
import type { Context } from '../../context.js';

/**
 * `rmq-bench audit`: the checklist (src/audit/checklist.ts) over one snapshot of the management
 * API (src/cluster/broker/snapshot.ts). runAudit reads the snapshot and returns data; it never prints.
 */

export interface AuditResult {
  ok: boolean;
  counts: Record<AuditStatus, number>;
  cluster: { name: string | undefined; version: string | undefined; node: string | undefined };
  answeredBy: Endpoint;
  unanswered: Unanswered[];
  objects: { nodes: number; queues: number; exchanges: number; bindings: number; policies: number };
  items: AuditItem[];
  /** How the broker's version shapes the checks that depend on it: the rules they were read against. */
  versionItems?: VersionItem[];
}

export function auditResultOf(snapshot: BrokerSnapshot, read: { answeredBy: Endpoint; unanswered: Unanswered[] }, options: AuditOptions): AuditResult {
  const items = auditChecks(snapshot, options);
  const counts = { pass: 0, warn: 0, fail: 0 };
  for (const i of items) counts[i.status] += 1;
  return {
    ok: counts.fail === 0,
    counts,
    cluster: {
      name: snapshot.overview.cluster_name,
      version: snapshot.overview.rabbitmq_version ?? snapshot.overview.product_version,
      node: snapshot.overview.node,
    },
    answeredBy: read.answeredBy,
    unanswered: read.unanswered,
    objects: {
      nodes: snapshot.nodes.length,
      queues: snapshot.queues.length,
      exchanges: snapshot.exchanges.length,
      bindings: snapshot.bindings.length,
      policies: snapshot.policies.length,
    },
    items,
    versionItems: versionItems(snapshot.overview.rabbitmq_version ?? snapshot.overview.product_version),
  };
}

export async function runAudit(ctx: Context, options: AuditOptions): Promise<AuditResult> {
  const read = await readBroker(new SnapshotReader(ctx.management));
  return auditResultOf(read.snapshot, read, options);
}
