import { errorMessage } from '../errors.js';
import { retryTransient } from '../util/retry.js';
import { type FaultSpec, onOneNode } from './spec.js';

/** pause: freeze the node's container (cgroup freezer: its sockets stay open, nothing answers); the heal unpauses it. */
export const pause: FaultSpec<'pause'> = {
  kind: 'pause',
  needs: {},
  leader: 'elected-away',
  nodeDown: true,
  leftovers: ['paused container'],
  color: '#7c3aed',
  async onContainer({ docker, container }) {
    const c = docker.getContainer(container);
    // A retried freeze began at its last attempt: the election is timed from there.
    const issuedAt = await pauseWithRetry(c);
    return {
      issuedAt,
      undo: async () => {
        await c.unpause();
      },
    };
  },
  apply: onOneNode('pause'),
};

/**
 * The cgroup freezer gives up ("OCI runtime pause failed: unable to freeze") when a process of
 * the container does not stop in time, typically one blocked in the kernel on disk I/O (an
 * fsync) on a busy machine, such as one running two clusters. The next attempt usually
 * succeeds: try up to PAUSE_ATTEMPTS times, 500 ms apart, before reporting it. Resolves with
 * performance.now() at the start of the attempt that froze it: when the fault really began.
 */
export const PAUSE_ATTEMPTS = 10;

export async function pauseWithRetry(c: { pause(): Promise<unknown> }, sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))): Promise<number> {
  return retryTransient(
    async () => {
      const startedAt = performance.now();
      await c.pause();
      return startedAt;
    },
    { attempts: PAUSE_ATTEMPTS, intervalMs: 500, isTransient: (err) => /unable to freeze/i.test(errorMessage(err)), sleep },
  );
}
