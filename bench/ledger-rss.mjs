#!/usr/bin/env node
// Does a 1,000,000-message ledger reconcile within 150 MB RSS? Not a test: it prints figures.
// Build first (dist/ is gitignored):  npx tsc -p tsconfig.json && node bench/ledger-rss.mjs [messages]
import { performance } from 'node:perf_hooks';
import { Ledger, messageId } from '../dist/ledger/ledger.js';
import { accountsBalance, reconcile } from '../dist/ledger/reconcile.js';
import { seededRandom } from '../dist/util/random.js';

const N = Number(process.argv[2] ?? 1_000_000);
const RSS_BUDGET_MB = 150;
const runId = 'bench';

const rand = seededRandom(42);
const mb = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;

// Publishing: every message attempted and written; 99% confirmed; 0.5% indeterminate (a confirm
// timeout), republished and then confirmed; 0.2% nacked; the rest (~0.3%) get no answer.
const ledger = new Ledger({ runId });
const t0 = performance.now();
for (let seq = 0; seq < N; seq++) {
  ledger.attempt(seq);
  ledger.written(seq);
  const x = rand();
  if (x < 0.005) {
    ledger.indeterminate(seq);
    ledger.republish(seq);
    ledger.written(seq);
    ledger.confirm(seq);
  } else if (x < 0.007) {
    ledger.nack(seq);
  } else if (x < 0.99) {
    ledger.confirm(seq);
  }
}
const publishMs = performance.now() - t0;

// Draining: 99.9% read once, by message_id string as the consumer sees it; republished messages
// are read twice a third of the time (both copies made it); a few strangers in the queue.
const t1 = performance.now();
for (let seq = 0; seq < N; seq++) {
  if (rand() < 0.001) continue;
  const id = messageId(runId, seq);
  ledger.recordRead(id);
  if (ledger.has(seq, 'republished') && rand() < 1 / 3) ledger.recordRead(id);
}
for (let i = 0; i < 5; i++) ledger.recordRead(`stale-${i}`);
const readMs = performance.now() - t1;

const t2 = performance.now();
const r = reconcile(ledger);
const reconcileMs = performance.now() - t2;

const rssMb = mb(process.memoryUsage().rss);
// resourceUsage().maxRSS is in kilobytes.
const peakRssMb = Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10;

const rows = [
  ['messages', N.toLocaleString('en-US')],
  ['record publishes', `${publishMs.toFixed(0)} ms`],
  ['record reads', `${readMs.toFixed(0)} ms (recordRead of message_id strings)`],
  ['reconcile', `${reconcileMs.toFixed(0)} ms`],
  ...Object.entries(r.counts).map(([k, v]) => [`counts.${k}`, String(v)]),
  ...['lost', 'silentlyLost', 'knownFailed', 'indeterminateUnread', 'neverWritten', 'recovered', 'duplicated', 'duplicateDeliveries'].map((k) => [
    k,
    String(r[k]),
  ]),
  ['accounts balance', String(accountsBalance(r))],
  ['verdict', r.verdict.ok ? 'ok' : `FAIL: ${r.verdict.reasons.join('; ')}`],
  ['ledger capacity', `${ledger.capacity.toLocaleString('en-US')} sequences (${mb(ledger.capacity * 4)} MB of arrays)`],
  ['rss now', `${rssMb} MB`],
  ['peak rss', `${peakRssMb} MB (budget ${RSS_BUDGET_MB} MB: ${peakRssMb <= RSS_BUDGET_MB ? 'within' : 'OVER'})`],
];
const w = Math.max(...rows.map(([k]) => k.length));
console.log(rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n'));
