import { fail, pass, plural, type Check } from '../check.js';

/** The checks of the cluster and its nodes. */

export const clusterSize: Check = {
  id: 'cluster-size',
  title: 'the cluster has at least 3 nodes',
  run: (s) => {
    const cluster = `cluster ${s.overview.cluster_name ?? s.overview.node ?? ''}`.trim();
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
