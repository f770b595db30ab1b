import type { PrefetchDemoResult } from '../../../scenarios/demos/prefetch-demo.js';
import { formatMs } from '../../../util/duration.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

/** prefetch-demo result → text. Pure. */

export function renderPrefetchDemo(r: PrefetchDemoResult): string {
  const o = r.options;
  const head = `prefetch-demo: ${o.count} messages, a slow consumer (${o.slowWorkMs} ms a message, subscribed first) and a fast one (${o.fastWorkMs} ms)`;
  const table = renderTable(
    ['prefetch', 'fast processed', 'slow processed', 'slow share', 'total time', 'peak held fast', 'peak held slow'],
    r.rows.map((x) => [
      x.prefetch === 0 ? '0 (unlimited)' : String(x.prefetch),
      x.fastProcessed,
      x.slowProcessed,
      `${Math.round((100 * x.slowProcessed) / Math.max(1, x.fastProcessed + x.slowProcessed))} %`,
      formatMs(x.totalMs),
      x.fastMaxHeld,
      x.slowMaxHeld,
    ]),
  );
  const notes = [
    'prefetch 1: fair, each consumer takes one at a time, but a round trip per message.',
    'prefetch 0: the broker pushes everything to whoever subscribed first; the slow consumer hoards the queue while the fast one idles.',
    'tens (10-50) keep both busy without hoarding: the usual advice.',
  ];
  return fitLines([head, '', table, '', ...notes]);
}
