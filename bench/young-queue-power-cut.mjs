#!/usr/bin/env node
// A power cut soon after a quorum queue was declared: declare a fresh quorum queue, publish N
// persistent messages and wait for every confirm, wait --delays ms, SIGKILL every node at once
// (`docker kill`), start them all, then count what the queue holds (a passive declare, then
// basic.get until empty). Plain amqplib and the docker CLI, no code shared with src/. Not a test:
// it prints figures (docs/COMMANDS.md, kill-all). The cluster is the one rmq-bench's settings
// name (RMQ_BENCH_NAME, RMQ_BENCH_AMQP_PORT, RMQ_BENCH_NODES); every node of it is killed.
//   npx rmq-bench cluster up && node bench/young-queue-power-cut.mjs [--delays 0,500,1000,2000,5000] [--runs 2] [-n 200]
import amqp from 'amqplib';
import { execa } from 'execa';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    delays: { type: 'string', default: '0,500,1000,2000,5000' },
    runs: { type: 'string', default: '2' },
    count: { type: 'string', short: 'n', default: '200' },
  },
});
const env = process.env;
const name = env.RMQ_BENCH_NAME || 'rmq-bench';
const nodes = Number(env.RMQ_BENCH_NODES || '3');
const containers = Array.from({ length: nodes }, (_, i) => (name === 'rmq-bench' ? `rabbit${i + 1}` : `${name}-rabbit${i + 1}`));
const url = `amqp://${env.RMQ_BENCH_USER || 'demo'}:${env.RMQ_BENCH_PASSWORD || 'demo'}@127.0.0.1:${env.RMQ_BENCH_AMQP_PORT || '5672'}`;
const n = Number(values.count);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One run: the queue's age at the kill (from the declare-ok), and what it holds after the restart. */
async function run(delayMs) {
  const queue = `bench.young-queue.${Date.now()}`;
  const conn = await amqp.connect(url);
  conn.on('error', () => undefined);
  const ch = await conn.createConfirmChannel();
  ch.on('error', () => undefined);
  await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  const declaredAt = performance.now();
  for (let i = 0; i < n; i++) ch.sendToQueue(queue, Buffer.from(String(i)), { persistent: true });
  await ch.waitForConfirms();
  await sleep(Math.max(0, delayMs - (performance.now() - declaredAt)));
  const killIssuedMs = performance.now() - declaredAt;
  await execa('docker', ['kill', ...containers], { timeout: 60_000 });
  await execa('docker', ['start', ...containers], { timeout: 120_000 });
  // Every node back: the queue answers a passive declare (3 minutes at most).
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      const c2 = await amqp.connect(url);
      c2.on('error', () => undefined);
      const ch2 = await c2.createChannel();
      const { messageCount } = await ch2.checkQueue(queue);
      let got = 0;
      while (await ch2.get(queue, { noAck: true })) got++;
      await ch2.deleteQueue(queue);
      await c2.close();
      return { delayMs, killIssuedMs, messageCount, got };
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${queue} did not answer within 180 s of the restart: ${err.message}`);
      await sleep(1_000);
    }
  }
}

const rows = [];
for (const d of values.delays.split(',').map(Number)) {
  for (let i = 0; i < Number(values.runs); i++) {
    const r = await run(d);
    process.stderr.write(`cut ${r.killIssuedMs.toFixed(0)} ms after the declare: ${r.got} of ${n} confirmed messages after the restart\n`);
    rows.push(r);
  }
}
const head = ['cut after the declare (ms)', 'confirmed', 'held after the restart'];
const lines = rows.map((r) => [r.killIssuedMs.toFixed(0), String(n), `${r.got} (queue count ${r.messageCount})`]);
const width = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
const line = (cells) => cells.map((c, i) => c.padEnd(width[i])).join('  ');
console.log(line(head));
console.log(line(width.map((w) => '-'.repeat(w))));
for (const l of lines) console.log(line(l));
