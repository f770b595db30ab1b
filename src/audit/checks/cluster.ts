import type { BrokerSnapshot } from '../../cluster/broker/snapshot.js';
import { fail, pass, plural, warn, type Check } from '../check.js';

/** The checks of the cluster and its nodes. */

/** The object of a cluster-wide item: `cluster rabbit@rabbit1` (its cluster_name). */
const clusterObject = (s: BrokerSnapshot): string => `cluster ${s.overview.cluster_name ?? s.overview.node ?? ''}`.trim();

export const clusterSize: Check = {
  id: 'cluster-size',
  title: 'the cluster has at least 3 nodes',
  run: (s) => {
    const cluster = clusterObject(s);
    return [
      s.nodes.length >= 3
        ? pass('cluster-size', cluster, `${s.nodes.length} nodes`)
        : fail(
            'cluster-size',
            cluster,
            `${plural(s.nodes.length, 'node')}: quorum queues need 3 to keep working when one node fails`,
            'run at least 3 nodes (an odd number)',
          ),
    ];
  },
};

export const nodeRunning: Check = {
  id: 'node-running',
  title: 'every node is running',
  run: (s) => {
    const running = s.nodes.filter((n) => n.running).length;
    return s.nodes.map((n) =>
      n.running
        ? pass('node-running', `node ${n.name}`, 'running')
        : fail(
            'node-running',
            `node ${n.name}`,
            `not running (${running} of ${s.nodes.length} are)`,
            `start ${n.name} again; until then its quorum-queue members are offline`,
          ),
    );
  },
};

export const partitions: Check = {
  id: 'partitions',
  title: 'no node is partitioned from another',
  run: (s) =>
    s.nodes.map((n) => {
      const partitioned = n.partitions ?? [];
      return partitioned.length > 0
        ? fail(
            'partitions',
            `node ${n.name}`,
            `partitioned from ${partitioned.join(', ')}`,
            'heal the network between the nodes; restart the nodes of the minority side',
          )
        : pass('partitions', `node ${n.name}`, 'no partition');
    }),
};

export const alarms: Check = {
  id: 'alarms',
  title: 'no node has a memory or disk alarm',
  run: (s) =>
    s.nodes.map((n) => {
      const raised = [n.mem_alarm ? 'memory' : undefined, n.disk_free_alarm ? 'disk' : undefined].filter((a): a is string => a !== undefined);
      return raised.length > 0
        ? fail(
            'alarms',
            `node ${n.name}`,
            `${raised.join(' and ')} alarm: publishers on every node are blocked until it clears`,
            raised.includes('disk')
              ? 'free disk space (or consume the backlog); check disk_free_limit'
              : 'consume the backlog or add memory; check vm_memory_high_watermark',
          )
        : pass('alarms', `node ${n.name}`, 'no memory or disk alarm');
    }),
};

/**
 * Feature flags left disabled: an upgrade that never ran `rabbitmqctl enable_feature_flag all`.
 * The next upgrade refuses to start while a flag it requires is off, and what the flags bring (on
 * 4.x, Khepri's metadata store among them) is not in use. Only stable flags: an experimental one
 * is off by design. One item for the cluster; none when the broker lists no flags (a snapshot
 * without them).
 */
export const featureFlags: Check = {
  id: 'feature-flags',
  title: 'every stable feature flag is enabled',
  run: (s) => {
    const flags = s.featureFlags ?? [];
    if (flags.length === 0) return [];
    const off = flags.filter((f) => f.state === 'disabled' && f.stability !== 'experimental').map((f) => f.name);
    return [
      off.length > 0
        ? warn(
            'feature-flags',
            clusterObject(s),
            `${plural(off.length, 'stable feature flag')} disabled (${off.join(', ')}): the upgrade was not finished, and the next one refuses to start while a flag it requires is off`,
            'rabbitmqctl enable_feature_flag all, once every node runs the new version',
          )
        : pass('feature-flags', clusterObject(s), `every stable feature flag of ${flags.length} enabled`),
    ];
  },
};

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * Messages the broker dropped because no binding matched and the publisher used neither
 * mandatory nor an alternate exchange. /api/overview's message_stats, not Prometheus: /metrics
 * is per node (and only node 1's port is published here), while the overview sums every node.
 * Its counts run from each node's start; a key is absent until it is non-zero.
 */
export const unroutableDropped: Check = {
  id: 'unroutable-dropped',
  title: 'no message was dropped as unroutable',
  run: (s) => {
    const cluster = clusterObject(s);
    const stats = s.overview.message_stats;
    if (stats === undefined) {
      // Nothing to count with: not a pass (the audit did not see), not a failure (nothing is known lost).
      return [
        warn(
          'unroutable-dropped',
          cluster,
          'the management API reports no message statistics (metrics collection is off), so messages dropped as unroutable cannot be counted',
          'turn metrics collection back on (management_agent.disable_metrics_collector = false), or read rabbitmq_global_messages_unroutable_dropped_total on every node’s Prometheus endpoint',
        ),
      ];
    }
    const dropped = count(stats.drop_unroutable);
    const returned = count(stats.return_unroutable);
    const returnedText = `${plural(returned, 'message')} returned to a mandatory publisher`;
    return [
      dropped > 0
        ? fail(
            'unroutable-dropped',
            cluster,
            `${plural(dropped, 'message')} dropped as unroutable (${returnedText}), counted since the nodes started (a restart resets it): a publisher used neither mandatory nor an alternate exchange, and no binding matched`,
            'publish with mandatory (and handle basic.return) or give the exchange an alternate-exchange; find the publisher with a routing key that matches no binding',
          )
        : pass('unroutable-dropped', cluster, `no message dropped as unroutable since the nodes started${returned > 0 ? ` (${returnedText})` : ''}`),
    ];
  },
};
