#!/usr/bin/env node
// A node killed soon after its stream coordinator member started: on a cluster made afresh
// (`rmq-bench cluster down --volumes`, then `cluster up`), declare the first stream (which starts
// the coordinator on every node), wait --delays ms from the declaration's answer, SIGKILL rabbit1
// (`docker kill`), start it, and 25 s later ask rabbit1 whether its coordinator member runs and
// whether Ra's directory still has its name. A member with neither is stranded: it never starts
// again (src/cluster/lifecycle/stream-coordinator.ts; `cluster up` adds it back). Plain fetch and
// the docker CLI; rmq-bench only makes the cluster. Not a test: it prints figures. The cluster is
// the one rmq-bench's settings name (RMQ_BENCH_NAME, RMQ_BENCH_MANAGEMENT_PORT); its volumes are
// removed for every run.
//   RMQ_BENCH_NAME=rmq-bench-sc RMQ_BENCH_AMQP_PORT=31672 RMQ_BENCH_MANAGEMENT_PORT=41672 \
//   RMQ_BENCH_PROMETHEUS_PORT=41692 node bench/stream-coordinator-kill.mjs [--delays 0,300,600,1000,2000] [--runs 2]
import { execa } from 'execa';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    delays: { type: 'string', default: '0,300,600,1000,2000' },
    runs: { type: 'string', default: '2' },
  },
});
const env = process.env;
const name = env.RMQ_BENCH_NAME || 'rmq-bench';
if (name === 'rmq-bench') {
  console.error(
    "stream-coordinator-kill: removes its cluster's volumes for every run: name a cluster of its own (RMQ_BENCH_NAME and its ports, see the header)",
  );
  process.exit(2);
}
const container = name === 'rmq-bench' ? 'rabbit1' : `${name}-rabbit1`;
const mgmt = `http://127.0.0.1:${env.RMQ_BENCH_MANAGEMENT_PORT || '15672'}`;
const auth = `Basic ${Buffer.from(`${env.RMQ_BENCH_USER || 'demo'}:${env.RMQ_BENCH_PASSWORD || 'demo'}`).toString('base64')}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cli = (...args) => execa('node', ['bin/rmq-bench.js', ...args], { cwd: new URL('..', import.meta.url), stdin: 'ignore', env: { RMQ_BENCH_QUIET: '1' } });

async function memberOnRabbit1() {
  const r = await execa('docker', [
    'exec',
    container,
    'rabbitmqctl',
    '-q',
    'eval',
    '{is_pid(whereis(rabbit_stream_coordinator)), lists:keymember(rabbit_stream_coordinator, 1, ra_directory:list_registered(coordination))}.',
  ]);
  const [running, registered] = r.stdout.trim().slice(1, -1).split(',');
  return { running: running === 'true', registered: registered === 'true' };
}

async function run(delayMs) {
  await cli('cluster', 'down', '--volumes');
  await cli('cluster', 'up');
  const res = await fetch(`${mgmt}/api/queues/%2F/bench.first-stream`, {
    method: 'PUT',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({ durable: true, arguments: { 'x-queue-type': 'stream' } }),
  });
  if (!res.ok) throw new Error(`declare: HTTP ${res.status}`);
  await sleep(delayMs);
  await execa('docker', ['kill', '-s', 'KILL', container]);
  await execa('docker', ['start', container]);
  await sleep(25_000);
  return memberOnRabbit1();
}

const delays = values.delays.split(',').map(Number);
console.log('delay ms  runs  stranded (rabbit1 member neither running nor registered)');
for (const d of delays) {
  let stranded = 0;
  for (let i = 0; i < Number(values.runs); i++) {
    const m = await run(d);
    if (!m.running && !m.registered) stranded++;
    process.stderr.write(`delay ${d} ms, run ${i + 1}: running ${m.running}, registered ${m.registered}\n`);
  }
  console.log(`${String(d).padStart(8)}  ${String(values.runs).padStart(4)}  ${stranded}`);
}
await cli('cluster', 'up');
