#!/usr/bin/env node
// How often RabbitMQ's quorum queue consumer timeout never fires: a plain amqplib consumer (no
// rmq-bench code, prefetch 1) on each of many fresh quorum queues with `x-consumer-timeout`,
// working through --messages messages, each acked after --work-ms, the second held instead
// (consumer-timeout-demo's shape). The broker should cancel the
// consumer (basic.cancel) once the held delivery is past the timeout; a queue whose consumer is
// not cancelled within the timeout plus a grace is a miss, confirmed by the management API
// (the held message still unacknowledged, the consumer still listed).
//
//   node bench/consumer-timeout-misses.mjs [--queues 20] [--rounds 5] [--timeout-ms 3000]
//        [--messages 5] [--work-ms 100] [--grace-ms 15000] [--via queue-argument|consumer-argument]
// against the default cluster (amqp://demo:demo@127.0.0.1:5672, management on 15672), or
// RMQ_BENCH_AMQP_PORT / RMQ_BENCH_MANAGEMENT_PORT for another of this project's clusters.
import amqp from 'amqplib';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    queues: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '5' },
    'timeout-ms': { type: 'string', default: '3000' },
    'work-ms': { type: 'string', default: '100' },
    messages: { type: 'string', default: '5' },
    via: { type: 'string', default: 'queue-argument' },
    'grace-ms': { type: 'string', default: '15000' },
  },
});
const queues = Number(values.queues);
const rounds = Number(values.rounds);
const timeoutMs = Number(values['timeout-ms']);
const firstWorkMs = Number(values['work-ms']);
const messages = Number(values.messages);
const via = values.via;
if (!['queue-argument', 'consumer-argument'].includes(via)) throw new Error(`--via ${via}: queue-argument or consumer-argument`);
const graceMs = Number(values['grace-ms']);
const amqpPort = Number(process.env.RMQ_BENCH_AMQP_PORT ?? 5672);
const mgmtPort = Number(process.env.RMQ_BENCH_MANAGEMENT_PORT ?? 15672);
const auth = `Basic ${Buffer.from('demo:demo').toString('base64')}`;

async function mgmt(path) {
  const r = await fetch(`http://127.0.0.1:${mgmtPort}${path}`, { headers: { authorization: auth }, signal: AbortSignal.timeout(10_000) });
  if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
  return r.json();
}

/** One queue: returns the ms from the held delivery to basic.cancel, or null (never, within the grace). */
async function oneQueue(conn, name) {
  const admin = await conn.createConfirmChannel();
  const timeoutArg = { 'x-consumer-timeout': timeoutMs };
  await admin.assertQueue(name, { durable: true, arguments: { 'x-queue-type': 'quorum', ...(via === 'queue-argument' ? timeoutArg : {}) } });
  for (let i = 1; i <= messages; i++) admin.sendToQueue(name, Buffer.from(String(i)), { persistent: true, messageId: i === 2 ? 'held' : String(i) });
  await admin.waitForConfirms();
  const ch = await conn.createChannel();
  await ch.prefetch(1);
  let heldAt = null;
  const cancelled = new Promise((resolve) => {
    const guard = setTimeout(() => resolve(null), timeoutMs + firstWorkMs + graceMs);
    void ch.consume(
      name,
      (m) => {
        if (m === null) {
          clearTimeout(guard);
          resolve(heldAt === null ? -1 : performance.now() - heldAt);
          return;
        }
        if (m.properties.messageId !== 'held') setTimeout(() => ch.ack(m), firstWorkMs);
        else heldAt ??= performance.now();
      },
      { arguments: via === 'consumer-argument' ? timeoutArg : {} },
    );
  });
  const afterMs = await cancelled;
  let broker = null;
  if (afterMs === null) {
    const q = await mgmt(`/api/queues/%2F/${encodeURIComponent(name)}`);
    broker = { unacked: q.messages_unacknowledged, consumers: q.consumers, leader: q.leader ?? q.node };
  }
  await ch.close().catch(() => undefined);
  await admin.deleteQueue(name).catch(() => undefined);
  await admin.close().catch(() => undefined);
  return { afterMs, broker };
}

const conn = await amqp.connect(`amqp://demo:demo@127.0.0.1:${amqpPort}`);
conn.on('error', () => undefined);
const all = [];
for (let r = 0; r < rounds; r++) {
  const results = await Promise.all(Array.from({ length: queues }, (_, i) => oneQueue(conn, `bench.consumer-timeout-misses.${process.pid}.${r}.${i}`)));
  all.push(...results);
  const missed = results.filter((x) => x.afterMs === null);
  process.stderr.write(
    `round ${r + 1}/${rounds}: ${queues - missed.length} cancelled, ${missed.length} never${missed.length ? ` (${missed.map((m) => JSON.stringify(m.broker)).join(' ')})` : ''}\n`,
  );
}
await conn.close();
const cancelled = all
  .filter((x) => x.afterMs !== null && x.afterMs >= 0)
  .map((x) => x.afterMs)
  .sort((a, b) => a - b);
const missed = all.filter((x) => x.afterMs === null);
const q = (p) => (cancelled.length ? Math.round(cancelled[Math.min(cancelled.length - 1, Math.floor(p * cancelled.length))]) : null);
const overview = await mgmt('/api/overview');
console.log(
  JSON.stringify({
    rabbitmq: overview.rabbitmq_version,
    timeoutMs,
    workMs: firstWorkMs,
    messages,
    via,
    queues: all.length,
    cancelled: cancelled.length,
    neverCancelled: missed.length,
    heldToCancelMs: { p50: q(0.5), p95: q(0.95), max: cancelled.at(-1) === undefined ? null : Math.round(cancelled.at(-1)) },
    missedStillHeldByBroker: missed.filter((m) => m.broker?.unacked === 1 && m.broker?.consumers === 1).length,
  }),
);
