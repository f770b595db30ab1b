#!/usr/bin/env node
// --fault feature-flags, --runs times, each on a cluster made afresh: `cluster reset --hard
// --feature-flags required`, a quorum queue declared once the cluster is whole (plain amqplib),
// then `compare --confirms on --fault feature-flags` on it with the tests' witness
// (test/integration/queue-witness.mjs: the broker's count and ids before the drain). Prints a
// line per run: the flags enabled and each call's time, what was confirmed, lost, and counted by
// the broker, the producer's longest stall and reconnects. Not a test: figures for
// docs/COMMANDS.md. The cluster is the one rmq-bench's settings name (RMQ_BENCH_NAME, its
// ports, RMQ_BENCH_RABBITMQ); its data is removed on every run, and it is left with every flag
// enabled.
//   node bench/feature-flags-runs.mjs [--runs 5] [-n 5000] [--rate 250]
import amqp from 'amqplib';
import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    count: { type: 'string', short: 'n', default: '5000' },
    rate: { type: 'string', default: '250' },
  },
});
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const user = env.RMQ_BENCH_USER || 'demo';
const password = env.RMQ_BENCH_PASSWORD || 'demo';
const firstPort = Number(env.RMQ_BENCH_AMQP_PORT || '5672');
const urls = [0, 1, 2].map((i) => `amqp://${user}:${password}@127.0.0.1:${firstPort + i}`);
const cli = (args) => execa('node', [path.join(root, 'bin', 'rmq-bench.js'), ...args], { cwd: root, reject: false, stdin: 'ignore' });

for (let run = 1; run <= Number(values.runs); run++) {
  const reset = await cli(['cluster', 'reset', '--hard', '--feature-flags', 'required']);
  if (reset.exitCode !== 0) throw new Error(`cluster reset failed: ${reset.stderr}`);
  const queue = `bench.feature-flags.${Date.now()}`;
  const conn = await amqp.connect(urls[0]);
  const ch = await conn.createChannel();
  await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await conn.close();
  const dir = mkdtempSync(path.join(tmpdir(), 'rmq-bench-ff-'));
  const out = path.join(dir, 'witness.jsonl');
  const witness = `node ${path.join(root, 'test', 'integration', 'queue-witness.mjs')} --urls ${urls.join(',')} --out ${out} --queue ${queue} --peek`;
  const r = await cli([
    'compare',
    '--confirms',
    'on',
    '--fault',
    'feature-flags',
    '--queue',
    queue,
    '-n',
    values.count,
    '--rate',
    values.rate,
    '--checkpoint-cmd',
    witness,
    '--json',
  ]);
  const c = JSON.parse(r.stdout);
  const w = JSON.parse(readFileSync(out, 'utf8').trim().split('\n')[0]);
  rmSync(dir, { recursive: true, force: true });
  const x = c.runs[0];
  const f = x.fault;
  const flags = (f.enabledFlags ?? []).map((g) => `${g.name} ${Math.round(g.ms)} ms${g.error ? ` (${g.error})` : ''}`).join(', ');
  const seqs = new Set((w.ids ?? []).map((id) => id.slice(id.lastIndexOf('-') + 1)));
  const events = x.producer.events.filter((e) => e.type !== 'connected').map((e) => e.type);
  console.log(
    `run ${run}: broker ${c.broker?.version}, leader ${f.node}; flags enabled from ${(f.faultAtMs / 1000).toFixed(2)} s to ${((f.appliedAtMs ?? 0) / 1000).toFixed(2)} s: ${flags}; ` +
      `confirmed ${x.reconciliation.counts.confirmed} of ${values.count}, lost ${x.reconciliation.lost}, read ${x.reconciliation.counts.readDistinct}; ` +
      `the broker held ${w.messages} (${seqs.size} distinct ids); longest stall ${Math.round(x.producer.longestStallMs)} ms, reconnects ${x.producer.reconnects}` +
      `${events.length > 0 ? `, producer events: ${events.join(', ')}` : ''}${f.error ? `; fault error: ${f.error}` : ''}; exit ${r.exitCode}`,
  );
}
