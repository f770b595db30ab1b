import type { ClusterContext } from '../cluster/cluster-ctx.js';
import { type AppliedFault, combineFaults, restoreQuietly } from './injector.js';

/**
 * quorum-loss: kill `first`, then `second` (two members of a queue, so that it has no majority
 * until both are back), as one fault whose restore starts both again. When the second kill
 * fails, or there is no second node, the first is restored before the error goes on: no node is
 * left down by a fault that did not happen.
 */
export async function injectQuorumLoss(ctx: Pick<ClusterContext, 'faults' | 'log'>, first: string, second: string | undefined): Promise<AppliedFault> {
  const firstKill = await ctx.faults.inject(first, 'kill');
  let secondKill: AppliedFault;
  try {
    if (second === undefined) throw new Error(`no second member next to ${first} for quorum-loss`);
    secondKill = await ctx.faults.inject(second, 'kill');
  } catch (err) {
    await restoreQuietly(firstKill, ctx.log);
    throw err;
  }
  return combineFaults('quorum-loss', [firstKill, secondKill]);
}
