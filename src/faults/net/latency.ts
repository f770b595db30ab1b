import { applyNetem, hostRunner } from '../../cluster/docker/netns.js';
import { type FaultSpec, onOneNode } from '../spec.js';
import { DEFAULT_NETEM } from './netem.js';

/** latency: everything the node sends delayed (and optionally dropped) by a tc netem qdisc in its network namespace. */
export const latency: FaultSpec<'latency'> = {
  kind: 'latency',
  needs: { netns: 'netem' },
  leader: 'stays',
  nodeDown: false,
  leftovers: ['qdisc'],
  color: '#ca8a04',
  async onContainer({ docker, container }, options) {
    return { undo: await applyNetem(docker, container, await hostRunner(), options.netem ?? DEFAULT_NETEM) };
  },
  apply: onOneNode('latency'),
};
