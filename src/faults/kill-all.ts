import { errorMessage } from '../errors.js';
import { retryUntil } from '../util/retry.js';
import { type AppliedFault, combineFaults, restoreQuietly } from './applied.js';
import { notWhole } from './rolling-restart.js';
import type { FaultSpec } from './spec.js';

/** How long the cluster may take to be whole again once every node was started: three nodes booting at once on a busy machine. */
const KILL_ALL_WHOLE_TIMEOUT_MS = 180_000;

/**
 * kill-all: a power cut of the whole rack. Every running node is SIGKILLed at once (every kill
 * issued before any returns), so no node shuts down cleanly and none is left to elect a leader;
 * the heal starts them all again and waits until the cluster is whole (every node running, every
 * quorum queue of the vhost led with all its members online). A confirmed message in a quorum
 * queue was written to a majority's disk before its confirm, and must survive it. When a kill
 * fails, the nodes already killed are started again before the error goes on.
 */
export const killAll: FaultSpec<'kill-all'> = {
  kind: 'kill-all',
  needs: {},
  leader: 'no-majority',
  nodeDown: true,
  leftovers: ['stopped container'],
  color: '#450a0a',
  async apply(ctx, { node, vhost }) {
    const running = (await ctx.management.nodes()).filter((n) => n.running).map((n) => n.name);
    const others = running.filter((n) => n !== node);
    const settled = await Promise.allSettled([node, ...others].map((n) => ctx.faults.inject(n, 'kill')));
    const killed = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed !== undefined) {
      for (const k of killed) await restoreQuietly(k, ctx.log);
      throw failed.reason;
    }
    const all = combineFaults('kill-all', killed);
    const fault: AppliedFault = {
      kind: 'kill-all',
      container: all.container,
      issuedAt: all.issuedAt,
      appliedAt: all.appliedAt,
      appliedAtIso: all.appliedAtIso,
      restored: false,
      async restore() {
        if (fault.restored) return;
        await all.restore();
        // Every node is started: the heal is done, what follows only waits for its end.
        fault.restored = true;
        await retryUntil(
          async () => notWhole(await ctx.management.nodes(), await ctx.management.queues(vhost)),
          (why) => why === null,
          {
            timeoutMs: KILL_ALL_WHOLE_TIMEOUT_MS,
            intervalMs: 500,
            signal: ctx.signal,
            describe: (last) =>
              `the cluster was not whole within ${KILL_ALL_WHOLE_TIMEOUT_MS} ms of every node started again (${last.value ?? errorMessage(last.error)})`,
          },
        );
      },
    };
    return { fault, alsoFaulted: others };
  },
};
