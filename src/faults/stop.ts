import { startAgain } from './kill.js';
import { type FaultSpec, onOneNode } from './spec.js';

/** stop: a clean shutdown of the node's container (SIGTERM, then SIGKILL after 10 s); the heal starts it again. */
export const stop: FaultSpec<'stop'> = {
  kind: 'stop',
  needs: {},
  leader: 'elected-away',
  nodeDown: true,
  leftovers: ['stopped container'],
  color: '#d97706',
  async onContainer({ docker, container }) {
    const c = docker.getContainer(container);
    await c.stop({ t: 10 });
    return { undo: () => startAgain(c, container) };
  },
  apply: onOneNode('stop'),
};
