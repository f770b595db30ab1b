import type { Amqp10Outcomes, PublisherResult } from '../../../client/publisher-result.js';
import { MAX_REFUSALS } from '../../../client/refused-resends.js';
import type { LatencySummary } from '../../../measure/histogram.js';
import { formatMs } from '../../../util/duration.js';
import { fitLines } from '../../text-wrap.js';

/** The producer's printers (the producer-report kind prints with them too; compare, with its latency line): result → text. Pure. */

export function latencyLine(l: LatencySummary): string {
  if (l.count === 0) return 'none';
  const f = (v: number | null): string => (v === null ? '-' : `${v.toFixed(v < 10 ? 2 : 0)} ms`);
  return `p50 ${f(l.p50Ms)}, p95 ${f(l.p95Ms)}, p99 ${f(l.p99Ms)}, max ${f(l.maxMs)} (${l.count} confirms)`;
}

/** The mode as a reader names it, in the run's protocol. Pure. */
function modeText(r: Pick<PublisherResult, 'mode' | 'amqp10'>): string {
  if (r.amqp10)
    return r.mode === 'none'
      ? 'AMQP 1.0, pre-settled (no outcomes: fire and forget)'
      : `AMQP 1.0, settled on the broker's outcome (${r.mode === 'sync' ? 'one at a time' : 'async window'})`;
  return r.mode === 'none' ? 'no confirms (fire and forget)' : r.mode === 'tx' ? 'transactions' : `${r.mode} confirms`;
}

/** The AMQP 1.0 outcome rows: per transfer (a message sent twice can count twice). Pure. */
function outcomeRows(o: Amqp10Outcomes): [string, string][] {
  return [
    ['accepted', `${o.accepted}`],
    ['released (unroutable)', `${o.released}`],
    [
      'rejected',
      `${o.rejected}${o.rejections.length > 0 ? ` (${o.rejections.map((x) => `${x.count}× ${x.condition}${x.description ? `: ${x.description}` : ''}`).join('; ')})` : ''}`,
    ],
    ['modified', `${o.modified}`],
    ['in doubt', `${o.inDoubt} (link or connection lost unsettled), ${o.timedOut} without an outcome in time`],
  ];
}

export function renderProducer(r: PublisherResult): string {
  const confirms = r.mode !== 'none';
  const rows: [string, string][] = [
    ['mode', modeText(r)],
    ['messages', `${r.count}`],
    ['written (reported sent)', `${r.written}`],
    ...(confirms && r.amqp10 ? outcomeRows(r.amqp10) : []),
    ...(confirms
      ? ([
          ['confirmed', `${r.confirmed}`],
          ['nacked', `${r.nacked}`],
          ['indeterminate', `${r.indeterminate} (published again: ${r.republished})`],
        ] as [string, string][])
      : []),
    ...(r.amqp10 ? [] : ([['returned (mandatory)', `${r.returned}`]] as [string, string][])),
    ['reconnects', `${r.reconnects}`],
    ['duration', `${formatMs(r.durationMs)} (${Math.round(r.publishRatePerSec)} publishes/s)`],
    ['longest stall', formatMs(r.longestStallMs)],
    ...(r.blocks > 0 ? ([['blocked by the broker', `${r.blocks}× (resource alarm), ${formatMs(r.blockedMs)} in all`]] as [string, string][]) : []),
    ...(confirms ? ([['confirm latency', latencyLine(r.confirmLatency)]] as [string, string][]) : []),
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  const text = rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`);
  if (!confirms) text.push('without confirms the producer only knows what it wrote to the socket: run `rmq-bench verify` to see what arrived');
  else if (r.amqp10)
    text.push(
      `confirmed = accepted at least once; nacked = rejected or modified (sent again after a backoff, at most ${MAX_REFUSALS} refusals); in doubt = published again`,
    );
  if (r.refusedGivenUp > 0) text.push(givenUpLine(r.refusedGivenUp));
  const unflushed = flushLine(r);
  if (unflushed) text.push(unflushed);
  if (r.gaveUp) text.push(`gave up: ${r.gaveUp}`);
  return fitLines(text);
}

/** Messages the broker refused MAX_REFUSALS times: one plain line. Pure. */
function givenUpLine(n: number): string {
  return `the broker kept refusing ${n} ${n === 1 ? 'message' : 'messages'} (${MAX_REFUSALS} refusals each): not sent again; known failed`;
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
