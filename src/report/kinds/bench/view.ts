import type { BenchModeResult, BenchQueueRow, BenchResult } from '../../../scenarios/traffic/bench.js';
import { isNum, n, objs, s } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { list, nullOr, num, obj, opt, str } from '../../shape-check.js';
import { latency, nullStr } from '../shared.js';
import { renderBench } from './text.js';
import { benchCharts } from './charts.js';

/** `rmq-bench bench`: throughput and latency per publish mode. */
export const bench: KindView<BenchResult> = {
  shape: obj<BenchResult>({
    runs: list(
      'runs',
      obj<BenchModeResult>({
        label: str,
        publishRatePerSec: nullOr(num),
        consumeRatePerSec: nullOr(num),
        confirmLatency: latency,
        e2eLatency: latency,
        // A document from before --queues has none: drawn without the per-queue tables and charts.
        perQueue: opt(
          list(
            'queue rows',
            obj<BenchQueueRow>({
              queue: str,
              leaderAtStart: nullStr,
              leaderAtEnd: nullStr,
              producers: num,
              consumers: num,
              published: num,
              consumed: num,
              publishRatePerSec: nullOr(num),
              consumeRatePerSec: nullOr(num),
              confirmLatency: latency,
            }),
          ),
        ),
      }),
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
