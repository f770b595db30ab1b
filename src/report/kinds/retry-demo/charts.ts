import type { RetryDemoResult } from '../../../scenarios/demos/retry-demo.js';
import type { RetryLadderResult } from '../../../scenarios/demos/retry-ladder.js';
import { PALETTE, dotTimeline } from '../../svg.js';
import { lanesByMessage } from '../../chart-parts.js';

/** retry-demo: each attempt at its measured time, one message (the TTL retry) or a lane per message (the ladder). Pure. */

/** An attempt's dot: green once processed, red before. */
const attemptColor = (outcome: string): string => (outcome === 'processed' ? PALETTE[1]! : PALETTE[3]!);

export function retryCharts(r: RetryDemoResult): string[] {
  return [
    '<h2>Delivery timeline</h2>',
    dotTimeline({
      title: `each attempt at its measured time (demo.retry TTL ${r.ttlMs} ms)`,
      lanes: [
        {
          name: r.messageId,
          dots: r.attempts.map((a) => ({
            x: a.atMs / 1000,
            label: `attempt ${a.attempt} at ${(a.atMs / 1000).toFixed(2)} s: ${a.outcome}`,
            color: attemptColor(a.outcome),
          })),
        },
      ],
      xLabel: 'seconds since the consumer started',
    }),
  ];
}

export function ladderCharts(r: RetryLadderResult): string[] {
  const ids = [...new Set(r.attempts.map((a) => a.messageId))];
  return [
    '<h2>Delivery timeline</h2>',
    dotTimeline({
      title: `each attempt at its measured time; rungs ${r.rungs.map((x) => `${x.ttlMs} ms`).join(', ')}`,
      lanes: lanesByMessage(ids, r.attempts, (a) => ({
        x: a.atMs / 1000,
        label: `attempt ${a.attempt} (${a.routingKey}) at ${(a.atMs / 1000).toFixed(2)} s: ${a.outcome}`,
        color: attemptColor(a.outcome),
      })),
      xLabel: 'seconds since the publish',
      // Message ids are long (run id and role): shown whole, up to 40 characters.
      laneChars: Math.min(40, Math.max(10, ...ids.map((id) => id.length))),
    }),
  ];
}
