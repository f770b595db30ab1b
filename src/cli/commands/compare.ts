import type { Context } from '../../context.js';
import { renderCompare } from '../../report/compare.js';
import { runCompare } from '../../scenarios/compare.js';
import { emit } from '../output.js';
import type { CompareCliOptions } from '../program.js';

export async function compare(ctx: Context, o: CompareCliOptions): Promise<number> {
  const { json, ...rest } = o;
  const r = await runCompare(ctx, { ...rest, routingKey: rest.queue });
  emit({ json }, 'compare', r, renderCompare(r));
  return r.ok ? 0 : 1;
}
