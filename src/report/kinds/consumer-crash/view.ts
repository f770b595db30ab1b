import type { ConsumerCrashResult, CrashRun } from '../../../scenarios/crashes/consumer-crash.js';
import { groupBy, n, objs, sum } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { list, num, obj, str } from '../../shape-check.js';
import { order } from '../shared.js';
import { consumerCrashCharts } from './charts.js';
import { renderConsumerCrash } from './text.js';

/** `rmq-bench consumer-crash`: consumers killed mid-batch, autoack against manual ack. */
export const consumerCrash: KindView<ConsumerCrashResult> = {
  shape: obj<ConsumerCrashResult>({
    runs: list('runs', obj<CrashRun>({ mode: str, run: num, lost: num, processedTwice: num, duplicatesSkipped: num, order })),
  }),
  text: renderConsumerCrash,
  charts: consumerCrashCharts,
  figures: (d) =>
    [...groupBy(objs(d.runs), 'mode')]
      .map(([mode, runs]) => `${mode}: lost ${n(sum(runs, 'lost'))}, processed twice ${n(sum(runs, 'processedTwice'))}`)
      .join('; '),
  reasons: none,
};
