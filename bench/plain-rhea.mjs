#!/usr/bin/env node
// The baseline for `rmq-bench bench --protocol amqp10 --confirm-mode async -y 0`: the same publishing over
// AMQP 1.0 written as a bare rhea sender, with nothing of rmq-bench in it (no ledger, no
// histograms, no retries). Not a test: it prints one JSON line of figures, measured the way bench
// measures them.
//   node bench/plain-rhea.mjs [--count 100000] [--window 256] [--size 100]
//                             [--url URL]
// Workload: a fresh quorum queue (declared and deleted over AMQP 0-9-1, outside the measure); one
// connection (SASL PLAIN, hostname vhost:/) with one sender link to /queues/<name>, sending
// `count` durable messages of `size` bytes as a data section, each with the properties rmq-bench's
// publisher gives it (message_id `<run>-<seq>` and the application property
// x-rmq-bench-published-at-us), unsettled, at most `window` awaiting their outcome, as far as the
// link's credit allows; more are sent from the outcome and credit events. No consumer.
// Figures: publish rate = published / (first send .. last outcome); CPU = process.cpuUsage()
// (user + system) from the first send to the last outcome, over the messages published: the
// window rmq-bench's cpuUsPerMessage covers; peak RSS = the highest of a once-a-second sample and
// the process's high-water mark (getrusage).
import amqp from 'amqplib';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import rhea from 'rhea';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    window: { type: 'string', default: '256' },
    size: { type: 'string', default: '100' },
    url: { type: 'string' },
  },
});
const count = Number(values.count);
const window = Number(values.window);
// Without --url: the first node of the cluster rmq-bench's settings name (src/config.ts's variables).
const env = process.env;
const urlText = values.url ?? `amqp://${env.RMQ_BENCH_USER || 'demo'}:${env.RMQ_BENCH_PASSWORD || 'demo'}@127.0.0.1:${env.RMQ_BENCH_AMQP_PORT || '5672'}`;
const url = new URL(urlText);
const body = rhea.message.data_section(Buffer.alloc(Number(values.size), 0x61));
const nowUs = () => Math.round((performance.timeOrigin + performance.now()) * 1000);
const HEADER = 'x-rmq-bench-published-at-us';
const runPrefix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}-`;
/** Opening the connection and the link, and the end's detach, may take this long at most. */
const SETUP_TIMEOUT_MS = 15_000;

const admin = await amqp.connect(urlText);
const queue = `bench-plain10-${Math.random().toString(36).slice(2, 7)}`;
const adminCh = await admin.createChannel();
await adminCh.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });

let finished = false;
let allSettled;
let fail;
const settled = new Promise((resolve, reject) => {
  allSettled = resolve;
  fail = (why) => reject(new Error(why));
});

const connection = rhea.create_container().connect({
  host: url.hostname,
  port: Number(url.port || 5672),
  username: decodeURIComponent(url.username),
  password: decodeURIComponent(url.password),
  hostname: 'vhost:/',
  reconnect: false,
});
connection.on('disconnected', (ctx) => {
  if (!finished) fail(`disconnected: ${ctx.error?.message ?? 'closed'}`);
});
const sender = connection.open_sender({ target: { address: `/queues/${queue}` }, autosettle: true });
await once(sender, 'sender_open', { signal: AbortSignal.timeout(SETUP_TIMEOUT_MS) });

let peakRss = process.memoryUsage.rss();
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 1_000);
let published = 0;
let accepted = 0;
let refused = 0;
let firstPublishAt;
let lastOutcomeAt = 0;
/** CPU at the first send and at the last outcome. */
let cpuAtFirstPublish;
let cpuAtLastOutcome;

function pump() {
  while (published < count && published - accepted - refused < window && sender.sendable()) {
    if (firstPublishAt === undefined) {
      firstPublishAt = performance.now();
      cpuAtFirstPublish = process.cpuUsage();
    }
    published++;
    sender.send({ message_id: runPrefix + published, durable: true, application_properties: { [HEADER]: nowUs() }, body });
  }
}
function outcome(ok) {
  if (ok) accepted++;
  else refused++;
  lastOutcomeAt = performance.now();
  if (accepted + refused === count) {
    cpuAtLastOutcome = process.cpuUsage();
    allSettled();
    return;
  }
  pump();
}
sender.on('sendable', pump);
sender.on('accepted', () => outcome(true));
for (const e of ['rejected', 'released', 'modified']) sender.on(e, () => outcome(false));
pump();
await settled;
finished = true;
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage.rss());

sender.close();
await once(sender, 'sender_close', { signal: AbortSignal.timeout(SETUP_TIMEOUT_MS) });
connection.close();
await once(connection, 'connection_close', { signal: AbortSignal.timeout(SETUP_TIMEOUT_MS) });
await adminCh.deleteQueue(queue);
await admin.close();

const cpuUs = cpuAtLastOutcome.user + cpuAtLastOutcome.system - cpuAtFirstPublish.user - cpuAtFirstPublish.system;
console.log(
  JSON.stringify({
    kind: 'plain-rhea',
    count,
    window,
    published,
    confirmed: accepted,
    nacked: refused,
    publishRatePerSec: (published * 1000) / (lastOutcomeAt - firstPublishAt),
    cpuSeconds: cpuUs / 1e6,
    cpuUsPerMessage: cpuUs / published,
    peakRssBytes: peakRss,
    processPeakRssBytes: process.resourceUsage().maxRSS * 1024,
  }),
);
