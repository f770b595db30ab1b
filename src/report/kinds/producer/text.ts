import type { PublisherResult } from '../../../amqp/publisher-result.js';
import type { LatencySummary } from '../../../measure/histogram.js';
import { formatMs } from '../../../util/duration.js';

/** The producer's printers (the producer-report kind prints with them too; compare, with its latency line): result → text. Pure. */

export function latencyLine(l: LatencySummary): string {
  if (l.count === 0) return 'none';
  const f = (v: number | null): string => (v === null ? '-' : `${v.toFixed(v < 10 ? 2 : 0)} ms`);
  return `p50 ${f(l.p50Ms)}, p95 ${f(l.p95Ms)}, p99 ${f(l.p99Ms)}, max ${f(l.maxMs)} (${l.count} confirms)`;
}

export function renderProducer(r: PublisherResult): string {
  const confirms = r.mode !== 'none';
  const rows: [string, string][] = [
    ['mode', r.mode === 'none' ? 'no confirms (fire and forget)' : r.mode === 'tx' ? 'transactions' : `${r.mode} confirms`],
    ['messages', `${r.count}`],
    ['written (reported sent)', `${r.written}`],
    ...(confirms
      ? ([
          ['confirmed', `${r.confirmed}`],
          ['nacked', `${r.nacked}`],
          ['indeterminate', `${r.indeterminate} (published again: ${r.republished})`],
        ] as [string, string][])
      : []),
    ['returned (mandatory)', `${r.returned}`],
    ['reconnects', `${r.reconnects}`],
    ['duration', `${formatMs(r.durationMs)} (${Math.round(r.publishRatePerSec)} publishes/s)`],
    ['longest stall', formatMs(r.longestStallMs)],
    ...(r.blocks > 0 ? ([['blocked by the broker', `${r.blocks}× (resource alarm), ${formatMs(r.blockedMs)} in all`]] as [string, string][]) : []),
    ...(confirms ? ([['confirm latency', latencyLine(r.confirmLatency)]] as [string, string][]) : []),
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  const text = rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`);
  if (!confirms) text.push('without confirms the producer only knows what it wrote to the socket: run `rmq-bench verify` to see what arrived');
  const unflushed = flushLine(r);
  if (unflushed) text.push(unflushed);
  if (r.gaveUp) text.push(`gave up: ${r.gaveUp}`);
  return text.join('\n');
}

/**
 * What the end could not hand over: the broker had not read everything written (its channel
 * close-ok did not come), typically while a resource alarm blocked the connection. undefined
 * when the end went cleanly.
 */
export function flushLine(r: Pick<PublisherResult, 'flush' | 'mode'>): string | undefined {
  const f = r.flush;
  if (!f || f.channel === 'closed') return undefined;
  const why = f.blockedBy ? `the connection was blocked by the broker (${f.blockedBy})` : f.channel === 'lost' ? 'the connection was lost' : 'no close-ok came';
  const buffered =
    f.bufferedBytes > 0
      ? `; ${f.bufferedBytes} bytes${f.bytesPerPublish > 0 ? ` (about ${Math.ceil(f.bufferedBytes / f.bytesPerPublish)} messages)` : ''} never left this process`
      : '; nothing was left in this process (what the kernel still held may yet arrive)';
  const what = r.mode === 'none' ? 'messages reported written may not have reached it' : 'unconfirmed messages are indeterminate';
  return `not flushed: the broker did not confirm reading everything (${why})${buffered}; ${what}`;
}
