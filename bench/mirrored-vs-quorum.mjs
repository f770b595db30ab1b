#!/usr/bin/env node
// Why quorum queues: a classic mirrored queue (ha-mode all) beside a quorum queue, the same leader
// fault, confirms on, on a RabbitMQ 3.10 cluster (the last line rmq-bench runs with mirrored
// queues). For each fault and queue type, `rmq-bench compare --confirms on --queue-type <type>
// --fault <fault> --runs N --json`; then one table, the two types side by side, with the
// cluster's partition handling named. Not a test: it prints figures (the README's "why quorum
// queues" and the workshop's).
//   npx tsc -p tsconfig.json
//   npx rmq-bench cluster up --rabbitmq 3.10 --name legacy --amqp-port 31672 --management-port 41672 --prometheus-port 41692
//   RMQ_BENCH_NAME=legacy RMQ_BENCH_AMQP_PORT=31672 RMQ_BENCH_MANAGEMENT_PORT=41672 RMQ_BENCH_PROMETHEUS_PORT=41692 \
//     node bench/mirrored-vs-quorum.mjs [--runs 10] [--faults kill,partition] [-n 5000] [--rate 250] [--partition-handling ignore,pause_minority]
// --partition-handling: run the whole matrix once per mode, `cluster up --partition-handling <mode>`
// first (the containers are made again, the data kept); without it, the cluster as it is.
import { execa } from 'execa';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'rmq-bench.js');
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    faults: { type: 'string', default: 'kill,partition' },
    count: { type: 'string', short: 'n', default: '5000' },
    rate: { type: 'string', default: '250' },
    'partition-handling': { type: 'string' },
  },
});
const TYPES = ['mirrored', 'quorum'];
const s = (ms) => (ms === null || ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);
const range = (xs) => {
  const v = xs.filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  if (v.length === 0) return '-';
  return v[0] === v.at(-1) ? s(v[0]) : `${s(v[0])}–${s(v.at(-1))}`;
};
const n = (x) => x.toLocaleString('en-US');
const run = (args, timeout) => execa('node', [BIN, ...args], { reject: false, timeout, env: { RMQ_BENCH_QUIET: '1' } });

async function matrix() {
  const cells = new Map();
  let handling = null;
  let version = null;
  for (const fault of values.faults.split(',')) {
    for (const type of TYPES) {
      const r = await run(
        ['compare', '--confirms', 'on', '--queue-type', type, '--fault', fault, '-n', values.count, '--rate', values.rate, '--runs', values.runs, '--json'],
        7_200_000,
      );
      if (r.exitCode !== 0 && r.exitCode !== 1) {
        process.stderr.write(`${type} under ${fault}: exit ${r.exitCode}: ${r.stderr.trim().split('\n').pop()}\n`);
        cells.set(`${fault}/${type}`, null);
        continue;
      }
      const d = JSON.parse(r.stdout);
      handling = d.partitionHandling;
      version = d.broker?.version ?? version;
      const lost = d.runs.map((x) => x.reconciliation.lost);
      process.stderr.write(`${type} under ${fault}: lost ${lost.join(', ')} of ${values.count} confirmed a run\n`);
      cells.set(`${fault}/${type}`, {
        confirmed: d.totals[0].confirmed,
        lost: d.totals[0].lost,
        runsWithLoss: d.totals[0].runsWithLoss,
        runs: d.runs.length,
        perRun: lost,
        election: range(d.runs.map((x) => x.fault?.electionMs)),
        stall: range(d.runs.map((x) => x.producer.longestStallMs)),
      });
    }
  }
  console.log(
    `RabbitMQ ${version ?? '?'}, partition handling ${handling ?? '?'}: compare --confirms on, ${values.count} messages a run at ${values.rate}/s, ${values.runs} runs`,
  );
  const head = ['fault', 'queue', 'confirmed lost', 'runs with loss', 'lost per run', 'election', 'longest stall'];
  const rows = [];
  for (const fault of values.faults.split(',')) {
    for (const type of TYPES) {
      const c = cells.get(`${fault}/${type}`);
      rows.push(
        c
          ? [fault, type, `${n(c.lost)} of ${n(c.confirmed)}`, `${c.runsWithLoss} of ${c.runs}`, c.perRun.join(' '), c.election, c.stall]
          : [fault, type, 'failed', '', '', '', ''],
      );
    }
  }
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(width[i])).join('  ');
  console.log(line(head));
  console.log(line(width.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(r));
  console.log();
}

const modes = values['partition-handling']?.split(',') ?? [undefined];
for (const mode of modes) {
  if (mode !== undefined) {
    const up = await run(['cluster', 'up', '--partition-handling', mode], 600_000);
    if (up.exitCode !== 0) {
      process.stderr.write(`cluster up --partition-handling ${mode}: exit ${up.exitCode}: ${up.stderr.trim().split('\n').pop()}\n`);
      process.exit(1);
    }
  }
  await matrix();
}
