#!/usr/bin/env node
// The baseline for `rmq-bench bench --mode async`: the same workload written as a plain amqplib
// script, with nothing of rmq-bench in it (no ledger, no histograms, no retries). Not a test: it
// prints one JSON line of figures, measured the way bench measures them.
//   node bench/plain-amqplib.mjs [--count 100000] [--window 256] [--size 100] [--prefetch 100]
//                                [--ack-every 1] [--url amqp://demo:demo@127.0.0.1:5672]
//                                [--consumers 1|0] [--same-properties]
// Workload: a fresh quorum queue (deleted at the end); one consumer (manual ack, prefetch, one
// multiple-ack every N) subscribed first; one producer on its own connection publishing `count`
// persistent messages of `size` bytes through the default exchange, each carrying its publish
// time, with async confirms and at most `window` unconfirmed; the run ends when every message is
// confirmed and consumed.
// --same-properties: each message also carries what rmq-bench's bench publisher puts on it, a
// message_id `<run>-<seq>` (what rmq-bench reconciles by) and its header name
// x-rmq-bench-published-at-us, so that the two do the same work on the wire.
// --consumers 0 (publisher only, like `rmq-bench bench -y 0`): no consumer; the run ends when
// every message is confirmed, and CPU is measured from just before the producer's connection to
// the last confirm (consume figures are null).
// Figures: publish rate = published / (first publish .. last confirm); consume rate = consumed /
// (first publish .. last delivery); CPU = process.cpuUsage() from the consumer's subscription to
// the last delivery; peak RSS = the highest of a once-a-second sample (as bench does) and the
// process's high-water mark (getrusage).
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
    url: { type: 'string', default: 'amqp://demo:demo@127.0.0.1:5672' },
  },
});
const count = Number(values.count);
const window = Number(values.window);
const prefetch = Number(values.prefetch);
const ackEvery = Number(values['ack-every']);
const withConsumer = Number(values.consumers) > 0;
const body = Buffer.alloc(Number(values.size), 0x61);
const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;
const sameProperties = values['same-properties'];
const HEADER = sameProperties ? 'x-rmq-bench-published-at-us' : 'published-at-us';
const runPrefix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}-`;

const admin = await amqp.connect(values.url);
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
  consumerConn = await amqp.connect(values.url);
  cch = await consumerConn.createChannel();
  await cch.prefetch(prefetch);
  let unacked = 0;
  await cch.consume(queue, (msg) => {
    consumed++;
    e2eSumMs += (nowUs() - msg.properties.headers[HEADER]) / 1000;
    lastDeliveryAt = performance.now();
    if (++unacked >= ackEvery || consumed === count) {
      cch.ack(msg, true);
      unacked = 0;
    }
    if (consumed === count) allConsumed();
  });
}

let peakRss = process.memoryUsage.rss();
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 1_000);
const cpu0 = process.cpuUsage();

const producerConn = await amqp.connect(values.url);
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
  firstPublishAt ??= performance.now();
  outstanding++;
  published++;
  const properties = sameProperties
    ? { messageId: runPrefix + published, persistent: true, headers: { [HEADER]: Math.round(nowUs()) } }
    : { persistent: true, headers: { [HEADER]: Math.round(nowUs()) } };
  const ok = pch.publish('', queue, body, properties, (err) => {
    outstanding--;
    if (err) nacked++;
    else confirmed++;
    lastConfirmAt = performance.now();
    changed();
  });
  if (!ok) needDrain = true;
}
while (outstanding > 0) await waitForChange();
await consumedAll;
const cpu = process.cpuUsage(cpu0);
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage.rss());

await pch.close();
await producerConn.close();
await cch?.close();
await consumerConn?.close();
await adminCh.deleteQueue(queue);
await admin.close();

const cpuSeconds = (cpu.user + cpu.system) / 1e6;
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
