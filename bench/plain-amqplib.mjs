#!/usr/bin/env node
// The baseline for `rmq-bench bench --confirm-mode async`: the same workload written as a plain amqplib
// script, with nothing of rmq-bench in it (no ledger, no histograms, no retries). Not a test: it
// prints one JSON line of figures, measured the way bench measures them.
//   node bench/plain-amqplib.mjs [--count 100000] [--window 256] [--size 100] [--prefetch 100]
//                                [--ack-every 1] [--url URL]
//                                [--consumers 1|0] [--same-properties] [--reuse-headers]
// Workload: a fresh quorum queue (deleted at the end); one consumer (manual ack, prefetch, one
// multiple-ack every N) subscribed first; one producer on its own connection publishing `count`
// persistent messages of `size` bytes through the default exchange, each carrying its publish
// time, with async confirms and at most `window` unconfirmed; the run ends when every message is
// confirmed and consumed.
// --same-properties: each message also carries what rmq-bench's bench publisher puts on it, a
// message_id `<run>-<seq>` (what rmq-bench reconciles by) and its header name
// x-rmq-bench-published-at-us, so that the two do the same work on the wire.
// --reuse-headers: one headers object for every message, its publish time set before each
// publish, as rmq-bench's publisher does (amqplib makes each message's header table an object whose
// prototype is the headers given: a fresh headers object per message is a fresh prototype each
// time, which costs V8 about 1.5 µs a message). Without it, a fresh object per message, the way a
// plain script writes it.
// --consumers 0 (publisher only, like `rmq-bench bench -y 0`): no consumer; the run ends when
// every message is confirmed (consume figures are null).
// Figures: publish rate = published / (first publish .. last confirm); consume rate = consumed /
// (first publish .. last delivery); CPU = process.cpuUsage() (user + system) from the first
// publish to the last confirm, or to the last delivery if that is later: the window rmq-bench's
// cpuUsPerMessage covers (connecting and closing left out on both sides); peak RSS = the highest
// of a once-a-second sample (as bench does) and the process's high-water mark (getrusage).
import amqp from 'amqplib';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    window: { type: 'string', default: '256' },
    size: { type: 'string', default: '100' },
    prefetch: { type: 'string', default: '100' },
    'ack-every': { type: 'string', default: '1' },
    consumers: { type: 'string', default: '1' },
    'same-properties': { type: 'boolean', default: false },
    'reuse-headers': { type: 'boolean', default: false },
    url: { type: 'string' },
  },
});
// Without --url: the first node of the cluster rmq-bench's settings name (src/config.ts's variables).
const env = process.env;
const url = values.url ?? `amqp://${env.RMQ_BENCH_USER || 'demo'}:${env.RMQ_BENCH_PASSWORD || 'demo'}@127.0.0.1:${env.RMQ_BENCH_AMQP_PORT || '5672'}`;
const count = Number(values.count);
const window = Number(values.window);
const prefetch = Number(values.prefetch);
const ackEvery = Number(values['ack-every']);
const withConsumer = Number(values.consumers) > 0;
const body = Buffer.alloc(Number(values.size), 0x61);
const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;
const sameProperties = values['same-properties'];
const HEADER = sameProperties ? 'x-rmq-bench-published-at-us' : 'published-at-us';
const sharedHeaders = values['reuse-headers'] ? { [HEADER]: 0 } : undefined;
const runPrefix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}-`;

const admin = await amqp.connect(url);
const queue = `bench-plain-${Math.random().toString(36).slice(2, 7)}`;
const adminCh = await admin.createChannel();
await adminCh.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });

let consumed = 0;
let e2eSumMs = 0;
let lastDeliveryAt = 0;
let allConsumed;
const consumedAll = withConsumer ? new Promise((resolve) => (allConsumed = resolve)) : Promise.resolve();
let consumerConn;
let cch;
if (withConsumer) {
  consumerConn = await amqp.connect(url);
  cch = await consumerConn.createChannel();
  await cch.prefetch(prefetch);
  let unacked = 0;
  await cch.consume(queue, (msg) => {
    consumed++;
    e2eSumMs += (nowUs() - msg.properties.headers[HEADER]) / 1000;
    lastDeliveryAt = performance.now();
    if (consumed === count) cpuAtLastDelivery = process.cpuUsage();
    if (++unacked >= ackEvery || consumed === count) {
      cch.ack(msg, true);
      unacked = 0;
    }
    if (consumed === count) allConsumed();
  });
}

let peakRss = process.memoryUsage.rss();
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 1_000);
/** CPU at the first publish, and at the end of the work: the last confirm or the last delivery, whichever comes later. */
let cpuAtFirstPublish;
let cpuAtLastConfirm;
let cpuAtLastDelivery;

const producerConn = await amqp.connect(url);
const pch = await producerConn.createConfirmChannel();
let published = 0;
let confirmed = 0;
let nacked = 0;
let outstanding = 0;
let firstPublishAt;
let lastConfirmAt = 0;
let wake;
const waitForChange = () => new Promise((resolve) => (wake = resolve));
const changed = () => {
  const w = wake;
  wake = undefined;
  w?.();
};
let needDrain = false;
pch.on('drain', () => {
  needDrain = false;
  changed();
});
while (published < count) {
  if (outstanding >= window || needDrain) {
    await waitForChange();
    continue;
  }
  if (firstPublishAt === undefined) {
    firstPublishAt = performance.now();
    cpuAtFirstPublish = process.cpuUsage();
  }
  outstanding++;
  published++;
  let headers;
  if (sharedHeaders) {
    sharedHeaders[HEADER] = Math.round(nowUs());
    headers = sharedHeaders;
  } else headers = { [HEADER]: Math.round(nowUs()) };
  const properties = sameProperties ? { messageId: runPrefix + published, persistent: true, headers } : { persistent: true, headers };
  const ok = pch.publish('', queue, body, properties, (err) => {
    outstanding--;
    if (err) nacked++;
    else confirmed++;
    lastConfirmAt = performance.now();
    if (confirmed + nacked === count) cpuAtLastConfirm = process.cpuUsage();
    changed();
  });
  if (!ok) needDrain = true;
}
while (outstanding > 0) await waitForChange();
await consumedAll;
const workEnd = [cpuAtLastConfirm, cpuAtLastDelivery].filter(Boolean).reduce((a, b) => (a.user + a.system >= b.user + b.system ? a : b));
const workCpu = { user: workEnd.user - cpuAtFirstPublish.user, system: workEnd.system - cpuAtFirstPublish.system };
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage.rss());

await pch.close();
await producerConn.close();
await cch?.close();
await consumerConn?.close();
await adminCh.deleteQueue(queue);
await admin.close();

const cpuSeconds = (workCpu.user + workCpu.system) / 1e6;
console.log(
  JSON.stringify({
    kind: 'plain-amqplib',
    consumers: withConsumer ? 1 : 0,
    count,
    window,
    published,
    confirmed,
    nacked,
    consumed,
    publishRatePerSec: (published * 1000) / (lastConfirmAt - firstPublishAt),
    consumeRatePerSec: withConsumer ? (consumed * 1000) / (lastDeliveryAt - firstPublishAt) : null,
    e2eMeanMs: withConsumer ? e2eSumMs / consumed : null,
    cpuSeconds,
    cpuUsPerMessage: (cpuSeconds * 1e6) / published,
    peakRssBytes: peakRss,
    processPeakRssBytes: process.resourceUsage().maxRSS * 1024,
  }),
);
