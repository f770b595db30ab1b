import { applyPartition, hostRunner } from '../../cluster/docker/netns.js';
import { type FaultSpec, onOneNode } from '../spec.js';

/** partition: the node cut off from its cluster peers by iptables rules in its network namespace (its clients still reach it). */
export const partition: FaultSpec<'partition'> = {
  kind: 'partition',
  needs: { netns: 'iptables' },
  leader: 'elected-away',
  nodeDown: true,
  leftovers: ['iptables rules', 'partition', 'stopped application'],
  color: '#db2777',
  async onContainer({ docker, container, node, nodes }) {
    const cuts = [...nodes.keys()].filter((n) => n !== node).map((n) => [node, n] as const);
    return { cuts, undo: await applyPartition(docker, container, await hostRunner()) };
  },
  apply: onOneNode('partition'),
};
