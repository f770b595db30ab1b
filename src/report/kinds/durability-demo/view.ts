import type { DurabilityDemoResult, DurabilityRow } from '../../../scenarios/demos/durability-demo.js';
import { n, objs, s } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { list, num, obj, str } from '../../shape-check.js';
import { durabilityCharts } from './charts.js';
import { renderDurabilityDemo } from './text.js';

/** `rmq-bench durability-demo`: which messages survive a restart, by queue type and delivery mode. */
export const durabilityDemo: KindView<DurabilityDemoResult> = {
  shape: obj<DurabilityDemoResult>({
    how: str,
    rows: list('rows', obj<DurabilityRow>({ queueType: str, deliveryMode: str, confirmed: num, survived: num, expected: num })),
  }),
  text: renderDurabilityDemo,
  charts: durabilityCharts,
  figures: (d) =>
    `${s(d.how)}: ${objs(d.rows)
      .map((r) => `${s(r.queueType)} ${s(r.deliveryMode)} ${n(r.survived)} of ${n(r.confirmed)} survived`)
      .join(', ')}`,
  reasons: none,
};
