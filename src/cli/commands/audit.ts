import type { Context } from '../../context.js';
import { renderAudit } from '../../report/audit.js';
import { runAudit } from '../../scenarios/audit.js';
import { emit } from '../output.js';
import type { AuditInvocation } from '../program-audit.js';

export async function audit(ctx: Context, o: AuditInvocation['options']): Promise<number> {
  ctx.progress.start('reading the broker (management API)');
  const r = await runAudit(ctx, { maxUnacked: o.maxUnacked });
  ctx.progress.stop();
  emit(o, 'audit', r, renderAudit(r, { all: o.all }));
  return r.ok ? 0 : 1;
}
