import type { Context } from '../../context.js';
import { renderFailover } from '../../report/cluster.js';
import { runFailover } from '../../scenarios/failover.js';
import { requireCluster } from '../../cluster/cluster.js';
import { emit } from '../output.js';
import type { FailoverCliOptions } from '../program.js';

export async function failover(ctx: Context, o: FailoverCliOptions): Promise<number> {
  await requireCluster(ctx);
  const r = await runFailover(ctx, o);
  emit(o, 'failover', r, renderFailover(r));
  return 0;
}
