#!/usr/bin/env node
// Issue #6's performance targets, as ratios measured in one run on the same cluster (machines
// here are noisy: compare, don't quote absolutes). Not a test: it prints figures.
//   npx tsc -p tsconfig.json && node bench/confirm-modes.mjs [--count 100000] [--rounds 3]
//       [--window 256] [--rss-count 1000000] [--table-time 10s] [--no-table]
// (--rounds 0 skips the ratios, --rss-count 0 the RSS run, --no-table the table.)
// 1. (unless --no-table) `rmq-bench bench` with every mode, -z --table-time: its table.
// 2. --rounds times, alternating which goes first: `rmq-bench bench --confirm-mode async --window W -C N`
//    and bench/plain-amqplib.mjs with the same workload (one producer, one consumer, prefetch 100,
//    ack each, 100-byte persistent messages into a fresh quorum queue), both on the cluster
//    rmq-bench's settings name (RMQ_BENCH_AMQP_PORT...). Each is its own process and measures
//    itself the same way (rate: first publish .. last confirm; CPU: process.cpuUsage() from the
//    first publish to the last delivery). Targets: throughput ratio >= 0.95, CPU per message
//    ratio <= 1.2 (medians).
// 3. (unless --rss-count 0) one `rmq-bench bench --confirm-mode async --window W -C 1000000`: its peak
//    RSS (sampled once a second, and the process's getrusage high-water mark) against 150 MB.
import { execa } from 'execa';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'rmq-bench.js');
const PLAIN = path.join(ROOT, 'bench', 'plain-amqplib.mjs');
const RSS_BUDGET_MB = 150;
const THROUGHPUT_TARGET = 0.95;
const CPU_TARGET = 1.2;

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    window: { type: 'string', default: '256' },
    'rss-count': { type: 'string', default: '1000000' },
    'table-time': { type: 'string', default: '10s' },
    'no-table': { type: 'boolean', default: false },
  },
});
const count = Number(values.count);
const rounds = Number(values.rounds);
const window = values.window;
const rssCount = Number(values['rss-count']);

const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const log = (line = '') => process.stdout.write(`${line}\n`);

async function benchCli(args) {
  const r = await execa('node', [BIN, 'bench', ...args, '--json'], { cwd: ROOT, env: { RMQ_BENCH_QUIET: '1' }, reject: false, stdin: 'ignore' });
  if (r.exitCode !== 0) throw new Error(`rmq-bench bench ${args.join(' ')} exited ${r.exitCode}: ${r.stderr.trim().split('\n').pop()}`);
  return { doc: JSON.parse(r.stdout), text: r.stderr };
}

async function ours() {
  const { doc } = await benchCli([
    '--confirm-mode',
    'async',
    '--window',
    window,
    '-C',
    String(count),
    '-x',
    '1',
    '-y',
    '1',
    '--prefetch',
    '100',
    '--multi-ack-every',
    '1',
  ]);
  const run = doc.runs[0];
  return {
    who: 'rmq-bench',
    ok: run.published === count && run.confirmed === count && run.consumed === count,
    rate: run.publishRatePerSec,
    consumeRate: run.consumeRatePerSec,
    cpuUs: run.cpuUsPerMessage,
    rssBytes: Math.max(run.peakRssBytes, doc.processPeakRssBytes),
  };
}

async function plain() {
  const r = await execa('node', [PLAIN, '--count', String(count), '--window', window, '--prefetch', '100', '--ack-every', '1'], {
    cwd: ROOT,
    reject: false,
    stdin: 'ignore',
  });
  if (r.exitCode !== 0) throw new Error(`plain-amqplib exited ${r.exitCode}: ${r.stderr.trim().split('\n').pop()}`);
  const d = JSON.parse(r.stdout);
  return {
    who: 'plain amqplib',
    ok: d.published === count && d.confirmed === count && d.consumed === count,
    rate: d.publishRatePerSec,
    consumeRate: d.consumeRatePerSec,
    cpuUs: d.cpuUsPerMessage,
    rssBytes: Math.max(d.peakRssBytes, d.processPeakRssBytes),
  };
}

log(`confirm-modes: ${new Date().toISOString()}, node ${process.version}`);

if (!values['no-table']) {
  log(`\n== rmq-bench bench (every mode, -z ${values['table-time']}) ==`);
  const { text } = await benchCli(['-z', values['table-time'], '--drain-timeout', '60s']);
  // The table and its notes: everything after the per-second lines.
  log(text.slice(text.indexOf('bench:')).trimEnd());
}

if (rounds > 0) {
  log(`\n== async confirms, window ${window}, ${count} messages: rmq-bench vs plain amqplib, ${rounds} rounds ==`);
  const results = { 'rmq-bench': [], 'plain amqplib': [] };
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? [ours, plain] : [plain, ours];
    for (const f of order) {
      const r = await f();
      results[r.who].push(r);
      log(
        `round ${i + 1} ${r.who.padEnd(13)}  publish ${Math.round(r.rate).toString().padStart(6)} msg/s  consume ${Math.round(r.consumeRate).toString().padStart(6)} msg/s  CPU ${r.cpuUs.toFixed(1).padStart(6)} µs/msg  peak RSS ${mb(r.rssBytes)} MB${r.ok ? '' : '  COUNTS DO NOT ADD UP'}`,
      );
    }
  }
  const med = (who, k) => median(results[who].map((r) => r[k]));
  const throughputRatio = med('rmq-bench', 'rate') / med('plain amqplib', 'rate');
  const cpuRatio = med('rmq-bench', 'cpuUs') / med('plain amqplib', 'cpuUs');
  log(
    `medians: rmq-bench ${Math.round(med('rmq-bench', 'rate'))} msg/s, ${med('rmq-bench', 'cpuUs').toFixed(1)} µs/msg; plain ${Math.round(med('plain amqplib', 'rate'))} msg/s, ${med('plain amqplib', 'cpuUs').toFixed(1)} µs/msg`,
  );
  log(
    `throughput ratio (rmq-bench / plain): ${throughputRatio.toFixed(3)}  (target >= ${THROUGHPUT_TARGET}: ${throughputRatio >= THROUGHPUT_TARGET ? 'met' : 'MISSED'})`,
  );
  log(`CPU per message ratio (rmq-bench / plain): ${cpuRatio.toFixed(3)}  (target <= ${CPU_TARGET}: ${cpuRatio <= CPU_TARGET ? 'met' : 'MISSED'})`);
}

if (rssCount > 0) {
  log(`\n== ${rssCount} messages, async confirms, window ${window}: peak RSS ==`);
  const t0 = performance.now();
  const { doc } = await benchCli(['--confirm-mode', 'async', '--window', window, '-C', String(rssCount)]);
  const run = doc.runs[0];
  const peak = Math.max(run.peakRssBytes, doc.processPeakRssBytes);
  log(
    `published ${run.published}, confirmed ${run.confirmed}, consumed ${run.consumed} in ${((performance.now() - t0) / 1000).toFixed(0)} s; publish ${Math.round(run.publishRatePerSec)} msg/s, CPU ${run.cpuUsPerMessage.toFixed(1)} µs/msg`,
  );
  // Growing with the message count would be a leak; a plateau is the heap's working size.
  const at = (share) => run.samples[Math.min(run.samples.length - 1, Math.floor(share * run.samples.length))];
  log(`RSS during the run: ${[0, 0.25, 0.5, 0.75, 1].map((q) => `${Math.round(q * 100)}% ${mb(at(q).rssBytes)} MB`).join(', ')}`);
  log(
    `peak RSS: ${mb(run.peakRssBytes)} MB sampled, ${mb(doc.processPeakRssBytes)} MB process high-water mark  (budget ${RSS_BUDGET_MB} MB: ${peak / 1024 / 1024 < RSS_BUDGET_MB ? 'within' : 'OVER'})`,
  );
}
