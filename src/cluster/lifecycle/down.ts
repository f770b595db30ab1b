import type { ClusterContext } from '../cluster-ctx.js';
import { removeClusterRecord } from './record.js';

/** Stop and remove the nodes' containers (and their data volumes with volumes: true). */
export async function clusterDown(ctx: ClusterContext, options: { volumes: boolean }): Promise<{ elapsedMs: number; volumes: boolean }> {
  const started = performance.now();
  await ctx.docker();
  const compose = await ctx.compose();
  ctx.progress.start(`stopping and removing rabbit1..${ctx.config.nodes.length}${options.volumes ? ' and their data volumes' : ''}`);
  await compose.down(options);
  await removeClusterRecord(ctx.config);
  ctx.progress.succeed(`cluster down${options.volumes ? ' (volumes removed)' : ''}`);
  return { elapsedMs: performance.now() - started, volumes: options.volumes };
}
