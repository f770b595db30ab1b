import { errorMessage } from '../errors.js';
import { retryTransient } from '../util/retry.js';
import { type FaultSpec, onOneNode } from './spec.js';

/** kill: SIGKILL the node's container, a crash with no clean shutdown; the heal starts it again. */
export const kill: FaultSpec<'kill'> = {
  kind: 'kill',
  needs: {},
  leader: 'elected-away',
  nodeDown: true,
  leftovers: ['stopped container'],
  color: '#dc2626',
  async onContainer({ docker, container }) {
    const c = docker.getContainer(container);
    await c.kill({ signal: 'SIGKILL' });
    return { undo: () => startAgain(c, container) };
  },
  apply: onOneNode('kill'),
};

/**
 * Start a container that was killed or stopped. Right after the kill the engine may still be
 * tearing down the old process's ports and network endpoint, and on a busy machine a start then
 * fails (the engine's 500); it is tried up to START_ATTEMPTS times, START_RETRY_MS apart, and the
 * error names every attempt's reason.
 */
export const START_ATTEMPTS = 5;
const START_RETRY_MS = 1_000;

export async function startAgain(
  c: { start(): Promise<unknown> },
  container: string,
  sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
): Promise<void> {
  const status = (err: unknown) => (err as { statusCode?: number }).statusCode;
  await retryTransient(
    async () => {
      try {
        await c.start();
      } catch (err) {
        // 304: already started (a start that did go through before its answer was lost).
        if (status(err) !== 304) throw err;
      }
    },
    {
      attempts: START_ATTEMPTS,
      intervalMs: START_RETRY_MS,
      // Only the engine's own failure is worth another try (not a 404: no such container).
      isTransient: (err) => status(err) === 500,
      giveUp: (errors) => new Error(`could not start ${container} (${errors.length} attempts: ${errors.map(errorMessage).join('; ')})`),
      sleep,
    },
  );
}
