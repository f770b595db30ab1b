import { NotFoundError } from '../errors.js';
import { pickIndex } from '../util/random.js';
import { type AppliedFault, combineFaults, restoreQuietly } from './applied.js';
import type { FaultSpec } from './spec.js';

/**
 * quorum-loss: kill the target node, then a second member of the queue (so that it has no
 * majority until both are back), as one fault whose restore starts both again. The second is the
 * first other member, or the one options.pick draws (chaos). When the second kill fails, the
 * first is restored before the error goes on: no node is left down by a fault that did not happen.
 */
export const quorumLoss: FaultSpec<'quorum-loss'> = {
  kind: 'quorum-loss',
  needs: { ownContainers: true },
  leader: 'no-majority',
  nodeDown: true,
  leftovers: ['stopped container'],
  color: '#991b1b',
  async apply(ctx, { node, members, options }) {
    const others = members.filter((m) => m !== node);
    if (others.length === 0) throw new NotFoundError(`${node} has no other queue member beside it: quorum-loss needs at least 2 members`);
    const second = others[options.pick === undefined ? 0 : pickIndex(options.pick, others.length)]!;
    const firstKill = await ctx.faults.inject(node, 'kill');
    let secondKill: AppliedFault;
    try {
      secondKill = await ctx.faults.inject(second, 'kill');
    } catch (err) {
      await restoreQuietly(firstKill, ctx.log);
      throw err;
    }
    return { fault: combineFaults('quorum-loss', [firstKill, secondKill]), alsoFaulted: [second] };
  },
};
