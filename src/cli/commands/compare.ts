import type { Context } from '../../context.js';
import { InterruptedError } from '../../errors.js';
import { renderCompare } from '../../report/compare.js';
import { runCompare } from '../../scenarios/compare.js';
import { emit } from '../output.js';
import type { CompareCliOptions } from '../program.js';

export async function compare(ctx: Context, o: CompareCliOptions): Promise<number> {
  const { json, html, managementUrls: _m, faultCmd: _f, restoreCmd: _r, ...rest } = o;
  const r = await runCompare(ctx, { ...rest, routingKey: rest.queue });
  emit({ json, html }, 'compare', r, renderCompare(r));
  if (r.interrupted) throw new InterruptedError('interrupted: the figures above are what was measured until Ctrl+C');
  return r.ok ? 0 : 1;
}
