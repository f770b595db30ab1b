#!/usr/bin/env node
// Producer throughput per publishing mode against the running cluster (not a test: it prints
// figures): the cluster rmq-bench's settings name (RMQ_BENCH_NAME, RMQ_BENCH_AMQP_PORT,
// RMQ_BENCH_MANAGEMENT_PORT..., as src/config.ts reads them). Run after `npx rmq-bench cluster up`
// and `npm run build`:
//   node bench/producer-throughput.mjs [messages=5000] [sizeBytes=100]
// Each mode publishes to a fresh quorum queue through the default exchange, connected to the
// queue's leader, with persistent messages; sync confirms get a fifth of the messages (one
// round trip each). Machines here are noisy: compare the modes, don't quote absolutes.
import amqp from 'amqplib';
import { runPublisher, newRunId } from '../dist/client/amqp091/publisher.js';
import { amqpUrl, loadConfig, managementUrl } from '../dist/config.js';
import { Ledger } from '../dist/ledger/ledger.js';

const count = Number(process.argv[2] ?? 5000);
const sizeBytes = Number(process.argv[3] ?? 100);
const config = loadConfig();
const urls = config.nodes.map((n) => amqpUrl(config, n));
const management = managementUrl(config, config.nodes[0]);
const vhost = encodeURIComponent(config.vhost);
const auth = `Basic ${Buffer.from(`${config.user}:${config.password}`).toString('base64')}`;

const modes = [
  { label: 'none (fire and forget)', mode: 'none', n: count },
  { label: 'tx, commit every 100', mode: 'tx', batchSize: 100, n: count },
  { label: 'sync confirms', mode: 'sync', n: Math.max(100, Math.floor(count / 5)) },
  { label: 'batch confirms (100)', mode: 'batch', batchSize: 100, n: count },
  { label: 'async confirms (window 64)', mode: 'async', window: 64, n: count },
  { label: 'async confirms (window 256)', mode: 'async', window: 256, n: count },
];

const conn = await amqp.connect(urls[0]);
const ch = await conn.createChannel();
const rows = [];
for (const m of modes) {
  const queue = `bench.producer.${newRunId()}`;
  await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  const q = await (await fetch(`${management}/api/queues/${vhost}/${queue}`, { headers: { authorization: auth } })).json();
  const leaderIndex = Math.max(0, config.nodes.map((n) => n.nodeName).indexOf(q.leader));
  const runId = newRunId();
  const ledger = new Ledger({ runId, capacity: m.n });
  const cpu0 = process.cpuUsage();
  const r = await runPublisher(
    {
      urls,
      startIndex: leaderIndex,
      exchange: '',
      routingKey: queue,
      count: m.n,
      ratePerSec: 0,
      sizeBytes,
      persistent: true,
      mandatory: false,
      mode: m.mode,
      window: m.window ?? 256,
      batchSize: m.batchSize ?? 100,
      confirmTimeoutMs: 30_000,
      heartbeatS: 5,
      reconnectTimeoutMs: 10_000,
      runId,
    },
    ledger,
    { signal: new AbortController().signal },
  );
  const cpu = process.cpuUsage(cpu0);
  // Without confirms, the rate is what the client library accepted; wait until the queue has them all.
  let inQueue = 0;
  for (let i = 0; i < 600 && inQueue < m.n; i++) {
    inQueue = (await ch.checkQueue(queue)).messageCount;
    if (inQueue < m.n) await new Promise((res) => setTimeout(res, 100));
  }
  rows.push({
    mode: m.label,
    messages: m.n,
    'msg/s': Math.round(r.publishRatePerSec),
    'confirm p50 ms': r.confirmLatency.p50Ms ?? '-',
    'confirm p99 ms': r.confirmLatency.p99Ms ?? '-',
    'client CPU µs/msg': Math.round((cpu.user + cpu.system) / m.n),
    'in queue': inQueue,
  });
  await ch.deleteQueue(queue);
}
await conn.close();
console.table(rows);
console.log(`peak RSS of this process: ${(process.resourceUsage().maxRSS / 1024).toFixed(1)} MB; for a 1,000,000-message ledger run bench/ledger-rss.mjs`);
