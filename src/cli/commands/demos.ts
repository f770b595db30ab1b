import type { Context } from '../../context.js';
import { renderDelayedRetryDemo, renderDlqDemo, renderDlqInspect, renderDlqReplay, renderRetryDemo, renderRetryLadder } from '../../report/dlq.js';
import { runRetryLadder } from '../../scenarios/retry-ladder.js';
import { runDurabilityDemo, type DurabilityDemoOptions } from '../../scenarios/durability-demo.js';
import { renderDurabilityDemo } from '../../report/durability.js';
import { runDelayedRetryDemo, type DelayedRetryDemoOptions } from '../../scenarios/delayed-retry-demo.js';
import { inspectDlq, replayDlq, type ReplayOptions } from '../../scenarios/dlq-tools.js';
import { createStepper } from '../steps.js';
import { runDlqDemo, type DlqDemoOptions } from '../../scenarios/dlq-demo.js';
import { runRetryDemo, type RetryDemoOptions } from '../../scenarios/retry-demo.js';
import { emit } from '../output.js';

export async function dlqDemo(ctx: Context, o: DlqDemoOptions & { json: boolean; html: string | undefined; auto: boolean }): Promise<number> {
  const { json, html, auto, ...options } = o;
  const r = await runDlqDemo(ctx, options, createStepper({ auto, progress: ctx.progress, signal: ctx.signal }));
  emit({ json, html }, 'dlq-demo', r, renderDlqDemo(r));
  return r.ok ? 0 : 1;
}

export async function retryDemo(
  ctx: Context,
  o: RetryDemoOptions & { json: boolean; html: string | undefined; auto: boolean; ladder: { backoffMs: number[]; timeScale: number } | undefined },
): Promise<number> {
  const { json, html, auto, ladder, ...options } = o;
  const step = createStepper({ auto, progress: ctx.progress, signal: ctx.signal });
  if (ladder) {
    const r = await runRetryLadder(ctx, { ...ladder, failures: options.failures, toleranceMs: options.toleranceMs }, step);
    emit({ json, html }, 'retry-demo', r, renderRetryLadder(r));
    return r.ok ? 0 : 1;
  }
  const r = await runRetryDemo(ctx, options, step);
  emit({ json, html }, 'retry-demo', r, renderRetryDemo(r));
  return r.ok ? 0 : 1;
}

export async function dlqInspect(ctx: Context, o: { json: boolean; queue: string; limit: number }): Promise<number> {
  const r = await inspectDlq(ctx, o.queue, o.limit);
  emit(o, 'dlq-inspect', r, renderDlqInspect(r));
  return 0;
}

export async function dlqReplay(ctx: Context, o: ReplayOptions & { json: boolean }): Promise<number> {
  const { json, ...options } = o;
  ctx.progress.start(`replaying ${o.queue} to ${o.to}`);
  const r = await replayDlq(ctx, options);
  ctx.progress.stop();
  emit({ json }, 'dlq-replay', r, renderDlqReplay(r));
  return 0;
}

export async function delayedRetryDemo(ctx: Context, o: DelayedRetryDemoOptions & { json: boolean; html: string | undefined; auto: boolean }): Promise<number> {
  const { json, html, auto, ...options } = o;
  const r = await runDelayedRetryDemo(ctx, options, createStepper({ auto, progress: ctx.progress, signal: ctx.signal }));
  emit({ json, html }, 'delayed-retry-demo', r, renderDelayedRetryDemo(r));
  return r.ok ? 0 : 1;
}

export async function durabilityDemo(ctx: Context, o: DurabilityDemoOptions & { json: boolean; html: string | undefined; auto: boolean }): Promise<number> {
  const { json, html, auto, ...options } = o;
  const r = await runDurabilityDemo(ctx, options, createStepper({ auto, progress: ctx.progress, signal: ctx.signal }));
  emit({ json, html }, 'durability-demo', r, renderDurabilityDemo(r));
  return r.ok ? 0 : 1;
}
