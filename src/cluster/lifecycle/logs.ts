import type { ClusterContext } from '../cluster-ctx.js';

/** The nodes' logs (compose logs): one node's or all, the last `tail` lines, followed or not. */
export async function clusterLogs(ctx: ClusterContext, options: { node?: string; follow: boolean; tail?: number }): Promise<void> {
  await ctx.docker();
  const compose = await ctx.compose();
  await compose.logs({ follow: options.follow, ...(options.node ? { service: options.node } : {}), ...(options.tail ? { tail: options.tail } : {}) });
}
