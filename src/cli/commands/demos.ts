import type { Context } from '../../context.js';
import { renderDlqDemo, renderRetryDemo } from '../../report/dlq.js';
import { createStepper } from '../../report/steps.js';
import { runDlqDemo, type DlqDemoOptions } from '../../scenarios/dlq-demo.js';
import { runRetryDemo, type RetryDemoOptions } from '../../scenarios/retry-demo.js';
import { emit } from '../output.js';

export async function dlqDemo(ctx: Context, o: DlqDemoOptions & { json: boolean; auto: boolean }): Promise<number> {
  const { json, auto, ...options } = o;
  const r = await runDlqDemo(ctx, options, createStepper({ auto, progress: ctx.progress, signal: ctx.signal }));
  emit({ json }, 'dlq-demo', r, renderDlqDemo(r));
  return r.ok ? 0 : 1;
}

export async function retryDemo(ctx: Context, o: RetryDemoOptions & { json: boolean; auto: boolean }): Promise<number> {
  const { json, auto, ...options } = o;
  const r = await runRetryDemo(ctx, options, createStepper({ auto, progress: ctx.progress, signal: ctx.signal }));
  emit({ json }, 'retry-demo', r, renderRetryDemo(r));
  return r.ok ? 0 : 1;
}
