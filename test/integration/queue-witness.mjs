#!/usr/bin/env node
// An independent witness of a queue, run by the integration tests through rmq-bench's
// --checkpoint-cmd (or directly): it shares no code with src/ (plain amqplib), so what it counts
// is a count rmq-bench did not compute.
//
//   node test/integration/queue-witness.mjs --urls amqp://u:p@host:5672,... --out FILE [--peek | --stream]
//
// The checkpoint, mode and run come from the RMQ_BENCH_CHECKPOINT* variables rmq-bench sets; the
// queue and vhost too, unless given (--queue / --vhost): with --queue the witness counts that queue
// whatever the checkpoint names, and records the name it was given beside it (announced), for the
// test to hold the two to the queue it expects. It appends one JSON line to FILE:
//   { checkpoint, mode, run, queue, announced, messages, ids, firstDeathReasons }
// messages: the broker's own count of the queue (queue.declare passive), read until two reads
// 500 ms apart agree. With --peek, ids: every message id the broker delivered, and beside each
// its x-first-death-reason header (or null): consumed without ack, then all nacked with requeue,
// so that the broker puts every message back: nothing is taken. With --stream (a stream, whose
// declare-ok counts nothing): ids, every message id the broker delivered reading the stream from
// its first offset until nothing came for 2 s, and messages, how many that was.
import { appendFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import amqp from 'amqplib';

const { values } = parseArgs({
  options: {
    urls: { type: 'string' },
    out: { type: 'string' },
    queue: { type: 'string' },
    vhost: { type: 'string' },
    peek: { type: 'boolean', default: false },
    stream: { type: 'boolean', default: false },
  },
});
const env = process.env;
const queue = values.queue ?? env.RMQ_BENCH_CHECKPOINT_QUEUE;
const vhost = values.vhost ?? env.RMQ_BENCH_CHECKPOINT_VHOST ?? '/';
if (!values.urls || !values.out || !queue) {
  console.error('witness: --urls, --out and a queue (--queue or RMQ_BENCH_CHECKPOINT_QUEUE) are required');
  process.exit(2);
}

const DEADLINE_MS = 60_000;
const PEEK_DEADLINE_MS = 90_000;
const started = Date.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The first URL that answers (the vhost put in its path). */
async function connect() {
  const errors = [];
  for (const url of values.urls.split(',')) {
    const u = new URL(url);
    u.pathname = `/${encodeURIComponent(vhost)}`;
    try {
      return await amqp.connect(u.toString(), { timeout: 10_000 });
    } catch (err) {
      errors.push(`${u.host}: ${err.message}`);
    }
  }
  throw new Error(`no broker answered: ${errors.join('; ')}`);
}

/** The queue's message count, once two reads 500 ms apart agree (within DEADLINE_MS of `since`). */
async function stableCount(ch, since) {
  let last = (await ch.checkQueue(queue)).messageCount;
  for (;;) {
    await sleep(500);
    const now = (await ch.checkQueue(queue)).messageCount;
    if (now === last) return now;
    if (Date.now() - since > DEADLINE_MS) throw new Error(`the count of ${queue} did not settle within ${DEADLINE_MS} ms (${last}, then ${now})`);
    last = now;
  }
}

/**
 * Every message delivered without ack until `expected` arrived, then all put back. The wait has
 * its own deadline (PEEK_DEADLINE_MS), not a silence window: right after a leader kill on a
 * loaded machine the first delivery of a deep queue can take seconds, and a short silence
 * window once ended the peek with none of 50,128 messages read. A peek that ends short is
 * recorded as it is (ids.length < messages), and the tests' check names it.
 */
async function peek(conn, expected) {
  const ch = await conn.createChannel();
  // Unlimited when the count does not fit basic.qos's 16 bits.
  await ch.prefetch(expected > 0 && expected <= 65_535 ? expected : 0);
  const ids = [];
  const firstDeathReasons = [];
  let last;
  await ch.consume(
    queue,
    (msg) => {
      if (!msg) return;
      ids.push(String(msg.properties.messageId));
      const reason = msg.properties.headers?.['x-first-death-reason'];
      firstDeathReasons.push(reason === undefined ? null : String(reason));
      last = msg;
    },
    { noAck: false },
  );
  const peekStarted = Date.now();
  while (ids.length < expected && Date.now() - peekStarted < PEEK_DEADLINE_MS) await sleep(50);
  if (ids.length < expected) console.error(`witness: peeked ${ids.length} of ${expected} within ${PEEK_DEADLINE_MS} ms`);
  if (last) ch.nack(last, true, true);
  await ch.close();
  return { ids, firstDeathReasons };
}

/**
 * A stream read from its first offset (each delivery acked: a stream's acks only grant credit)
 * until nothing came for STREAM_IDLE_MS. A read that fails (a node whose replica is not ready
 * closes the channel) is started again from the first offset on the next node, within
 * PEEK_DEADLINE_MS; every error is said on stderr.
 */
const STREAM_IDLE_MS = 2_000;
async function readStreamOnce(url) {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(vhost)}`;
  const conn = await amqp.connect(u.toString(), { timeout: 10_000 });
  let failed = null;
  conn.on('error', (err) => (failed ??= err));
  try {
    const ch = await conn.createChannel();
    ch.on('error', (err) => (failed ??= err));
    ch.on('close', () => (failed ??= new Error('the channel closed')));
    await ch.prefetch(1_000);
    const ids = [];
    let lastAt = Date.now();
    await ch.consume(
      queue,
      (msg) => {
        if (!msg) {
          failed ??= new Error('the broker cancelled the read');
          return;
        }
        ids.push(String(msg.properties.messageId));
        lastAt = Date.now();
        ch.ack(msg);
      },
      { noAck: false, arguments: { 'x-stream-offset': 'first' } },
    );
    while (failed === null && Date.now() - lastAt < STREAM_IDLE_MS) {
      if (Date.now() - started > PEEK_DEADLINE_MS) throw new Error(`the stream still delivered after ${PEEK_DEADLINE_MS} ms (${ids.length} read)`);
      await sleep(50);
    }
    if (failed) throw failed;
    return { ids, firstDeathReasons: ids.map(() => null) };
  } finally {
    await conn.close().catch(() => undefined);
  }
}

async function readStream() {
  const urls = values.urls.split(',');
  for (let attempt = 0; ; attempt++) {
    const url = urls[attempt % urls.length];
    try {
      return await readStreamOnce(url);
    } catch (err) {
      console.error(`witness: reading ${queue} from ${new URL(url).host} failed (${err.message}); reading it again from its first offset`);
      if (Date.now() - started > PEEK_DEADLINE_MS) throw err;
      await sleep(500);
    }
  }
}

/**
 * The queue's count, and with --peek its ids, on a connection of its own. The broker can be slow
 * to answer, or close the channel, right after a heal (a 3.10 cluster whose partition handling
 * restarted nodes): a failed attempt is said on stderr and made again on a fresh connection until
 * WITNESS_DEADLINE_MS. A peek cut short puts nothing at risk: its messages go back unacked.
 */
const WITNESS_DEADLINE_MS = 150_000;
async function countAndPeek() {
  for (;;) {
    const attemptStarted = Date.now();
    try {
      const conn = await connect();
      conn.on('error', (err) => console.error(`witness: connection error: ${err.message}`));
      try {
        const ch = await conn.createChannel();
        ch.on('error', (err) => console.error(`witness: channel error: ${err.message}`));
        const messages = await stableCount(ch, attemptStarted);
        await ch.close();
        return { messages, peeked: values.peek ? await peek(conn, messages) : null };
      } finally {
        await conn.close().catch(() => undefined);
      }
    } catch (err) {
      if (Date.now() - started > WITNESS_DEADLINE_MS) throw err;
      console.error(`witness: counting ${queue} failed (${err.message}); counting it again`);
      await sleep(2_000);
    }
  }
}

let messages;
let peeked = null;
try {
  if (values.stream) {
    peeked = await readStream();
    messages = peeked.ids.length;
  } else {
    ({ messages, peeked } = await countAndPeek());
  }
} catch (err) {
  // One last line: rmq-bench quotes it when the checkpoint fails.
  console.error(`witness: gave up on ${queue}: ${err.message}`);
  process.exit(1);
}
const ids = peeked?.ids ?? null;
const line = {
  checkpoint: env.RMQ_BENCH_CHECKPOINT ?? null,
  mode: env.RMQ_BENCH_CHECKPOINT_MODE ?? null,
  run: env.RMQ_BENCH_CHECKPOINT_RUN === undefined ? null : Number(env.RMQ_BENCH_CHECKPOINT_RUN),
  queue,
  announced: env.RMQ_BENCH_CHECKPOINT_QUEUE ?? null,
  messages,
  ids,
  firstDeathReasons: peeked?.firstDeathReasons ?? null,
};
appendFileSync(values.out, `${JSON.stringify(line)}\n`);
console.log(`witness: ${queue} holds ${messages} messages${ids ? `; peeked ${ids.length}` : ''}`);
