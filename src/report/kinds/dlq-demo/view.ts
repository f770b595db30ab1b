import type { DlqDemoResult, ReasonResult } from '../../../scenarios/demos/dlq-demo.js';
import type { DlxStrategyResult, StrategyRun, VariantSummary } from '../../../scenarios/demos/dlx-strategy-plan.js';
import { n, objs, s } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { anything, byField, list, num, obj, opt, str } from '../../shape-check.js';
import { strings } from '../shared.js';
import { dlqDemoCharts, dlxStrategyCharts } from './charts.js';
import { renderDlqDemo, renderDlxStrategy } from './text.js';

/**
 * `rmq-bench dlq-demo`: each dead-letter reason, one queue each (DlqDemoResult); with --strategy,
 * at-most-once against at-least-once dead lettering under a fault (DlxStrategyResult, mode "strategy").
 */
export type DlqDemoDocument = DlqDemoResult | DlxStrategyResult;

const isStrategy = (r: DlqDemoDocument): r is DlxStrategyResult => 'mode' in r && r.mode === 'strategy';

export const dlqDemo: KindView<DlqDemoDocument> = {
  shape: byField(
    'mode',
    {
      strategy: obj<DlxStrategyResult>({
        count: num,
        fault: str,
        runs: list('runs', obj<StrategyRun>({ variant: str, run: num, inDlq: num, leftInSource: num, lost: num, problems: opt(strings) })),
        summaries: opt(list('summaries', obj<VariantSummary>({ variant: opt(str), lost: opt(num), published: opt(num) }))),
      }),
    },
    obj<DlqDemoResult>({
      results: list(
        'results',
        obj<ReasonResult>({ reason: str, published: num, expectedInDlq: num, dead: list('dead letters', anything), problems: opt(strings) }),
      ),
    }),
  ),
  text: (r) => (isStrategy(r) ? renderDlxStrategy(r) : renderDlqDemo(r)),
  charts: (r) => (isStrategy(r) ? dlxStrategyCharts(r) : dlqDemoCharts(r)),
  figures: (d) =>
    isStrategy(d)
      ? objs(d.summaries)
          .map((v) => `${s(v.variant)}: lost ${n(v.lost)} of ${n(v.published)}`)
          .join('; ')
      : objs(d.results)
          .map((r) => `${s(r.reason)}: ${n(objs(r.dead).length)} of ${n(r.expectedInDlq)} dead-lettered`)
          .join('; '),
  reasons: none,
};
