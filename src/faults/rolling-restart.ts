import { errorMessage, InterruptedError } from '../errors.js';
import { retryUntil } from '../util/retry.js';
import type { AppliedFault, FaultContext } from './applied.js';
import { shortNodeName, type QueueLeadership } from '../cluster/broker/queue-leadership.js';
import type { FaultSpec } from './spec.js';

/**
 * rolling-restart: what an upgrade, a config change or the Kubernetes operator does to a
 * cluster: every node in turn is stopped cleanly and started again, the next one only once the
 * cluster is whole (every node running, every quorum queue of the vhost with a leader and all its
 * members online), as the operator waits before it rolls the next pod. The nodes go in the order
 * a StatefulSet rolls its pods: the highest ordinal first (rabbit3, rabbit2, rabbit1).
 *
 * The fault is applied at once and runs in the background; its restore() waits for the roll to
 * end. close() (an error elsewhere, Ctrl+C) stops rolling and starts a node the roll had stopped:
 * no node is left down on any way out.
 */
export const rollingRestart: FaultSpec<'rolling-restart'> = {
  kind: 'rolling-restart',
  needs: {},
  leader: 'moves-in-turn',
  nodeDown: false,
  leftovers: ['stopped container'],
  color: '#0f766e',
  apply: async (ctx, { vhost, onLine }) => ({
    fault: await startRollingRestart(ctx, { vhost, perNodeTimeoutMs: ROLLING_NODE_TIMEOUT_MS, ...(onLine ? { onLine } : {}) }),
    alsoFaulted: [],
  }),
};

/** A rolling restart's deadline for each node to be back and the cluster whole again. */
const ROLLING_NODE_TIMEOUT_MS = 120_000;

/** The order the nodes are rolled in: highest ordinal first, as a StatefulSet does. Pure. */
export function rollingOrder(nodeNames: readonly string[]): string[] {
  const ordinal = (n: string): number => Number(/(\d+)$/.exec(shortNodeName(n))?.[1] ?? 0);
  return [...nodeNames].sort((a, b) => ordinal(b) - ordinal(a));
}

/** Why the cluster is not whole (a line for people), or null when it is. Pure. */
export function notWhole(nodes: readonly { name: string; running: boolean }[], queues: readonly QueueLeadership[]): string | null {
  const down = nodes.filter((n) => !n.running).map((n) => shortNodeName(n.name));
  if (down.length > 0) return `${down.join(', ')} not running`;
  for (const q of queues) {
    if (q.type !== 'quorum') continue;
    if (q.leader === undefined) return `${q.name} has no leader`;
    if (q.online.length < q.members.length) return `${q.name}: ${q.online.length} of ${q.members.length} members online`;
  }
  return null;
}

interface RollingRestartOptions {
  vhost: string;
  /** How long one node may take to be back and the cluster whole again. */
  perNodeTimeoutMs: number;
  /** A line for people as each node goes and comes back. */
  onLine?: (line: string) => void;
}

/** Restart every node in turn; the fault's restore() waits until the last one is back and the cluster whole. */
async function startRollingRestart(ctx: FaultContext, options: RollingRestartOptions): Promise<AppliedFault> {
  const order = rollingOrder((await ctx.management.nodes()).map((n) => n.name));
  const abort = new AbortController();
  const signal = AbortSignal.any([abort.signal, ctx.signal]);
  let stopped: AppliedFault | null = null;
  const say = options.onLine ?? (() => undefined);

  const whole = (what: string) =>
    retryUntil(
      async () => notWhole(await ctx.management.nodes(), await ctx.management.queues(options.vhost)),
      (why) => why === null,
      {
        timeoutMs: options.perNodeTimeoutMs,
        intervalMs: 500,
        signal,
        describe: (last) => `the cluster was not whole ${what} within ${options.perNodeTimeoutMs} ms (${last.value ?? errorMessage(last.error)})`,
      },
    );

  const roll = async (): Promise<void> => {
    for (const node of order) {
      await whole(`before ${shortNodeName(node)} was restarted`);
      say(`rolling restart: stopping ${shortNodeName(node)}`);
      stopped = await ctx.faults.inject(node, 'stop');
      if (signal.aborted) break;
      await stopped.restore();
      stopped = null;
      say(`rolling restart: ${shortNodeName(node)} started again`);
    }
    await whole('after the last node');
  };
  const issuedAt = performance.now();
  const done = roll().finally(async () => {
    // However it ended, no node is left stopped.
    const s = stopped as AppliedFault | null;
    if (s !== null && !s.restored) await s.restore().catch((err: unknown) => ctx.log(`could not start ${s.container} again: ${errorMessage(err)}`));
  });
  done.catch(() => undefined);
  const fault: AppliedFault = {
    kind: 'rolling-restart',
    container: order.map(shortNodeName).join(' → '),
    issuedAt,
    appliedAt: performance.now(),
    appliedAtIso: new Date().toISOString(),
    restored: false,
    async restore() {
      if (fault.restored) return;
      // Asked early (Ctrl+C, an error): stop rolling; the node stopped now is started by the finally above.
      if (ctx.signal.aborted) abort.abort(new InterruptedError('rolling restart interrupted'));
      await done;
      fault.restored = true;
    },
  };
  return fault;
}
