import type { PrefetchDemoResult, PrefetchRow } from '../../../scenarios/demos/prefetch-demo.js';
import { ms, n, objs } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { list, num, obj, opt } from '../../shape-check.js';
import { prefetchCharts } from './charts.js';
import { renderPrefetchDemo } from './text.js';

/** `rmq-bench prefetch-demo`: a fast and a slow consumer under each prefetch. */
export const prefetchDemo: KindView<PrefetchDemoResult> = {
  shape: obj<PrefetchDemoResult>({
    rows: list('rows', obj<PrefetchRow>({ prefetch: num, fastProcessed: num, slowProcessed: num, totalMs: opt(num) })),
  }),
  text: renderPrefetchDemo,
  charts: prefetchCharts,
  figures: (d) =>
    objs(d.rows)
      .map((r) => `prefetch ${r.prefetch === 0 ? '0 (unlimited)' : n(r.prefetch)}: ${ms(r.totalMs)}, fast ${n(r.fastProcessed)} / slow ${n(r.slowProcessed)}`)
      .join('; '),
  reasons: none,
};
