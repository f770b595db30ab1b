import { hostRunner } from '../../cluster/docker/netns.js';
import type { PartitionShape } from '../kinds.js';
import { type FaultSpec, onOneNode } from '../spec.js';
import { applyCuts, planShapeFrom, SHAPE_MIN_NODES } from './partition-shapes.js';

/**
 * The partitions of several nodes at once (partition-shapes.ts draws them): the links of a shape
 * drawn around the target node cut by iptables rules in each cut node's namespace. The fault reads
 * as its groups ("rabbit2 rabbit4 | rabbit1 rabbit3 rabbit5"); the heal removes exactly those rules.
 */
function shapeSpec<K extends PartitionShape>(kind: K, fields: Pick<FaultSpec<K>, 'leader' | 'nodeDown' | 'color'>): FaultSpec<K> {
  return {
    kind,
    needs: { netns: 'iptables', nodes: SHAPE_MIN_NODES[kind], ownContainers: true },
    ...fields,
    leftovers: ['iptables rules', 'partition', 'stopped application'],
    async onContainer({ docker, node, nodes }, options) {
      const plan = planShapeFrom(kind, [...nodes.keys()], node, options.pick ?? Math.random());
      const issuedAt = performance.now();
      return { issuedAt, shape: plan.text, cuts: plan.cuts, undo: await applyCuts(docker, plan.cuts, nodes, await hostRunner()) };
    },
    apply: onOneNode(kind),
  };
}

/** The node in a minority: the majority elects a new leader. */
export const partitionHalves = shapeSpec('partition-halves', { leader: 'elected-away', nodeDown: true, color: '#be185d' });
/** Every node sees a majority (itself and two neighbours): the leader stays. */
export const partitionRing = shapeSpec('partition-ring', { leader: 'stays', nodeDown: false, color: '#9d174d' });
/** The node in a half that still reaches the bridge: the leader stays. */
export const partitionBridge = shapeSpec('partition-bridge', { leader: 'stays', nodeDown: false, color: '#f472b6' });
