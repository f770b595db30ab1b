import { applyTbf, hostRunner } from '../../cluster/docker/netns.js';
import { type FaultSpec, onOneNode } from '../spec.js';
import { DEFAULT_BANDWIDTH } from './netem.js';

/** slow-link: the bandwidth of everything the node sends, to its peers and its clients, limited by a tc tbf qdisc. */
export const slowLink: FaultSpec<'slow-link'> = {
  kind: 'slow-link',
  needs: { netns: 'tbf' },
  leader: 'stays',
  nodeDown: false,
  leftovers: ['qdisc'],
  color: '#65a30d',
  async onContainer({ docker, container }, options) {
    return { undo: await applyTbf(docker, container, await hostRunner(), options.bandwidth ?? DEFAULT_BANDWIDTH) };
  },
  apply: onOneNode('slow-link'),
};
