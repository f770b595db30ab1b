#!/usr/bin/env node
// Not a test: prints what the broker does. For each AMQP 0-9-1 consumer action, on a quorum
// queue with x-delivery-limit 2 and no dead-letter exchange: the x-delivery-count header of each
// delivery, whether it comes back (redelivered), and when the message is gone. The seed of
// issue 33's delivery-limit-demo. Needs the cluster up (`rmq-bench cluster up`).
//   node bench/delivery-count-probe.mjs [--limit 2] [--rounds 6]
import amqp from 'amqplib';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const LIMIT = arg('--limit', 2);
const ROUNDS = arg('--rounds', 6);
const URL = process.env.RMQ_BENCH_PROBE_URL ?? 'amqp://demo:demo@127.0.0.1:5672';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One action, round after round on one message: what each delivery said, and what is left. */
async function trial(action) {
  const conn = await amqp.connect(URL);
  try {
    const ch = await conn.createChannel();
    const q = `probe.delivery-count.${action}.${process.pid}`;
    await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': LIMIT } });
    try {
      ch.sendToQueue(q, Buffer.from('x'), { messageId: 'm1', persistent: true });
      await sleep(300);
      const seen = [];
      for (let i = 0; i < ROUNDS; i++) {
        // 'close': each delivery on a connection of its own, closed with the message unacked (a crash).
        const own = action === 'close' ? await amqp.connect(URL) : undefined;
        const c = own ? await own.createChannel() : ch;
        const m = await c.get(q, { noAck: false });
        if (!m) {
          seen.push('gone');
          await own?.close();
          break;
        }
        seen.push(`count ${m.properties.headers?.['x-delivery-count'] ?? '-'}${m.fields.redelivered ? ' (redelivered)' : ''}`);
        if (action === 'nack-requeue') c.nack(m, false, true);
        else if (action === 'reject-requeue') c.reject(m, true);
        await own?.close();
        await sleep(300);
      }
      const left = (await ch.checkQueue(q)).messageCount;
      console.log(`${action.padEnd(15)} ${seen.join(' | ')}; left in the queue: ${left}`);
    } finally {
      await ch.deleteQueue(q);
    }
  } finally {
    await conn.close();
  }
}

console.log(`x-delivery-limit ${LIMIT}, no dead-letter exchange, ${ROUNDS} rounds at most`);
for (const action of ['nack-requeue', 'reject-requeue', 'close']) await trial(action);
