import type { BenchModeResult, BenchResult } from '../../../scenarios/bench.js';
import { isNum, n, objs, s } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { list, nullOr, num, obj, str } from '../../shape-check.js';
import { latency } from '../shared.js';
import { renderBench } from './text.js';
import { benchCharts } from './charts.js';

/** `rmq-bench bench`: throughput and latency per publish mode. */
export const bench: KindView<BenchResult> = {
  shape: obj<BenchResult>({
    runs: list(
      'runs',
      obj<BenchModeResult>({ label: str, publishRatePerSec: nullOr(num), consumeRatePerSec: nullOr(num), confirmLatency: latency, e2eLatency: latency }),
    ),
  }),
  text: renderBench,
  charts: benchCharts,
  figures: (d) =>
    objs(d.runs)
      .map((r) => `${s(r.label)}: ${n(isNum(r.publishRatePerSec) ? Math.round(r.publishRatePerSec) : r.publishRatePerSec)} msg/s`)
      .join(', '),
  reasons: none,
};
