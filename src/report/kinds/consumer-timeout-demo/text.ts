import {
  CLAIMS_SOURCE,
  type ConsumerTimeoutDemoResult,
  type ConsumerTimeoutVersionRun,
  type TimeoutEnding,
  type ViaResult,
} from '../../../scenarios/demos/consumer-timeout-plan.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

const s = (ms: number | null): string => (ms === null ? '-' : `${(ms / 1000).toFixed(2)} s`);

function count(processed: Record<string, number>): { unique: number; total: number } {
  const values = Object.values(processed);
  return { unique: values.filter((n) => n > 0).length, total: values.reduce((a, b) => a + b, 0) };
}

/** What became of the naive consumer, in one line. Pure. */
function naiveStory(r: ViaResult): string {
  const n = r.naive;
  const parts: string[] = [];
  parts.push(n.cancelAtMs === null ? 'never cancelled' : `cancelled at ${s(n.cancelAtMs)}`);
  if (n.lateAckAtMs !== null) parts.push(`acked ${r.slowId} late at ${s(n.lateAckAtMs)}`);
  if (n.channelClosedAtMs !== null) parts.push(`its channel closed at ${s(n.channelClosedAtMs)}${n.channelError ? ` (amqplib: ${n.channelError})` : ''}`);
  else if (n.channelError) parts.push(`channel error: ${n.channelError}`);
  else parts.push('its channel stayed open');
  return parts.join('; ');
}

function redelivery(r: ViaResult): string {
  const again = r.handling.deliveries.filter((d) => d.messageId === r.slowId)[1];
  return again ? `x-delivery-count ${again.deliveryCount}, x-acquired-count ${again.acquiredCount}` : 'not seen';
}

/** One via on one version, in three short cells: the slow message back, how the broker ended the consumer, after how long. Pure. */
function versionCells(x: ViaResult, ending: TimeoutEnding): string[] {
  const again = x.handling.deliveries.filter((d) => d.messageId === x.slowId)[1];
  const back = again ? `back (x-delivery-count ${again.deliveryCount})` : 'not back';
  const n = x.naive;
  const ended =
    ending === 'cancel'
      ? n.cancelAtMs === null
        ? 'no basic.cancel'
        : `basic.cancel, channel ${n.channelOpenAfterCancel ? 'open' : 'closed'}`
      : /PRECONDITION/i.test(n.channelError ?? '')
        ? 'channel closed (PRECONDITION_FAILED)'
        : 'channel not closed by the broker';
  const after = x.measuredTimeoutMs === null ? '-' : s(x.measuredTimeoutMs);
  return [`${back}; ${ended}; after ${after}${x.checks.every((c) => c.held) ? '' : ' (NOT as documented)'}`];
}

/** Several clusters side by side: a row per way the timeout is set, a column per version, then each version's findings. Pure. */
function renderConsumerTimeoutVersions(r: ConsumerTimeoutDemoResult, versions: readonly ConsumerTimeoutVersionRun[]): string {
  const vias = [...new Set(versions.flatMap((v) => v.runs.map((x) => x.via)))];
  const table = renderTable(
    ['set by', ...versions.map((v) => `RabbitMQ ${v.brokerVersion} (${v.cluster})`)],
    vias.map((via) => [
      via,
      ...versions.map((v) => {
        const x = v.runs.find((y) => y.via === via);
        return x ? versionCells(x, v.ending)[0]! : '(not run)';
      }),
    ]),
  );
  const rules = versions.map(
    (v) =>
      `  RabbitMQ ${v.brokerVersion}: ${v.ending === 'cancel' ? 'the queue cancels the consumer at the timeout (basic.cancel), the channel stays open' : 'the channel is closed (PRECONDITION_FAILED) at a check once a minute, every unacked delivery on it returned'}; the slow message worked ${s(v.slowWorkMs)} (${CLAIMS_SOURCE[v.ending]})`,
  );
  const problems = versions.flatMap((v) => v.runs.flatMap((x) => x.problems.map((p) => `RabbitMQ ${v.brokerVersion}: ${x.via}: ${p}`)));
  return fitLines([
    `consumer-timeout-demo on ${versions.map((v) => `RabbitMQ ${v.brokerVersion}`).join(' and ')}: timeout ${r.timeoutMs} ms; ${r.count} messages per queue, message ${r.slowIndex} works longer than the timeout, the others ${r.workMs} ms`,
    '',
    "each version's cells: the slow message; the consumer's end; after how long",
    table,
    '',
    'what each version does with a delivery held past the timeout:',
    ...rules,
    ...(problems.length > 0 ? ['', ...problems] : []),
    '',
    r.ok ? "verdict: OK (each broker did what its version's docs say, and rmq-bench's consumer processed every message exactly once)" : 'verdict: FAILED',
  ]);
}

/** consumer-timeout-demo result → text. Pure. */
export function renderConsumerTimeoutDemo(r: ConsumerTimeoutDemoResult): string {
  if (r.versions && r.versions.length > 1) return renderConsumerTimeoutVersions(r, r.versions);
  const table = renderTable(
    ['set by', 'consumer', 'processed', 'twice', 'cancels', 'waiting at end', 'consumers at end', 'idle while waiting'],
    r.runs.flatMap((x) => {
      const naive = count(x.naive.processed);
      const handling = count(x.handling.processed);
      return [
        [
          x.via,
          'naive',
          `${naive.unique}/${x.messageIds.length}`,
          naive.total - naive.unique,
          x.naive.cancelAtMs === null ? 0 : 1,
          x.naiveEnd.ready,
          x.naiveEnd.consumers,
          x.naiveIdleMs === null ? '-' : s(x.naiveIdleMs),
        ],
        [
          '',
          'rmq-bench',
          `${handling.unique}/${x.messageIds.length}`,
          handling.total - handling.unique,
          x.handling.cancels,
          x.handlingEnd.ready,
          x.handlingEnd.consumers,
          '-',
        ],
      ];
    }),
  );
  const claims = renderTable(
    ['set by', 'claim', 'measured', 'held'],
    r.runs.flatMap((x) => x.checks.map((c, i) => [i === 0 ? x.via : '', c.claim, c.measured, c.held ? 'yes' : 'NO'])),
  );
  const stories = r.runs.flatMap((x) => [
    `${x.via}: naive: ${naiveStory(x)}.`,
    `  ${x.naiveEnd.ready} message(s) waited in ${x.naive.queue} at the end with ${x.naiveEnd.consumers} consumer(s) listed${x.naiveProcessedButWaiting > 0 ? `; ${x.naiveProcessedButWaiting} of them already processed (a second processing to come)` : ''}.`,
    `  rmq-bench: ${(r.ending ?? 'cancel') === 'cancel' ? 'cancelled' : 'its channel closed'} at ${s(x.handling.cancelAtMs)}, subscribed again at ${s(x.handling.resubscribedAtMs)}; ${x.slowId} came back to it (${redelivery(x)}); ${x.handling.duplicatesAbsorbed} duplicate(s) absorbed by its store.`,
  ]);
  const problems = r.runs.flatMap((x) => x.problems.map((p) => `${x.via}: ${p}`));
  return fitLines([
    `consumer-timeout-demo on RabbitMQ ${r.brokerVersion}: timeout ${r.timeoutMs} ms; ${r.count} messages per queue, message ${r.slowIndex} works ${r.slowWorkMs} ms, the others ${r.workMs} ms; watched ${s(r.observeMs)} after`,
    '',
    table,
    '',
    ...stories,
    '',
    `the claims (${CLAIMS_SOURCE[r.ending ?? 'cancel']}):`,
    claims,
    '',
    ...problems,
    r.ok ? "verdict: OK (the broker did what its docs say, and rmq-bench's consumer processed every message exactly once)" : 'verdict: FAILED',
  ]);
}
