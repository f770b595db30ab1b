#!/usr/bin/env node
// Does the 3.10 mend end every split, on a loaded machine? For each partition handling mode, a
// RabbitMQ 3.10 cluster of its own is brought up with that mode, and its queue leader is
// partitioned and healed again and again (`rmq-bench failover --fault <shape> --hold`,
// the shapes taken in turn), while another process keeps the CPU busy: by default `rmq-bench
// bench` publishing to the default 4.3 cluster (the load the test suite puts beside a shard).
// After each run this script asks every node itself, with plain HTTP that shares no code with
// src/, whether the cluster is whole: every node answers, lists every node running, and reports no
// partition. Not a test: it prints figures (docs/DEVELOPMENT.md, "The 3.10 mend").
//   npx tsc -p tsconfig.json && npx rmq-bench cluster up
//   node bench/partition-heal.mjs [--runs 20] [--modes ignore,pause_minority,autoheal]
//     [--shapes partition,partition-halves,partition-bridge] [--hold 90s] [--load bench|none] [--slot 0]
// The 3.10 cluster is rmq-bench-heal (AMQP 14672-14674, management 24672-24674, Prometheus 24692),
// made again per mode (the data kept), and left up at the end (`rmq-bench cluster down --name
// rmq-bench-heal --volumes` removes it). `--slot N` (1 or 2) names it rmq-bench-heal-N and adds
// 100 × N to its ports, so the three modes can run side by side, each the others' load:
//   node bench/partition-heal.mjs --modes ignore &
//   node bench/partition-heal.mjs --modes pause_minority --slot 1 --load none &
//   node bench/partition-heal.mjs --modes autoheal --slot 2 --load none
import { execa } from 'execa';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'rmq-bench.js');
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    modes: { type: 'string', default: 'ignore,pause_minority,autoheal' },
    shapes: { type: 'string', default: 'partition,partition-halves,partition-bridge' },
    // net_ticktime is 60 s: a node notes a peer down, and Mnesia the partition, 45 to 75 s into the
    // fault. A shorter hold ends the fault before any node noticed it, which tests nothing of the mend.
    hold: { type: 'string', default: '90s' },
    load: { type: 'string', default: 'bench' },
    slot: { type: 'string', default: '0' },
  },
});
const SLOT = Number(values.slot);
if (!Number.isInteger(SLOT) || SLOT < 0 || SLOT > 2) throw new Error(`--slot is 0, 1 or 2, not ${values.slot}`);
const NAME = SLOT === 0 ? 'rmq-bench-heal' : `rmq-bench-heal-${SLOT}`;
const AMQP = 14672 + 100 * SLOT;
const MGMT = 24672 + 100 * SLOT;
const PROM = 24692 + 100 * SLOT;
const NODES = ['rabbit1', 'rabbit2', 'rabbit3'];
const ENV = {
  RMQ_BENCH_NAME: NAME,
  RMQ_BENCH_AMQP_PORT: String(AMQP),
  RMQ_BENCH_MANAGEMENT_PORT: String(MGMT),
  RMQ_BENCH_PROMETHEUS_PORT: String(PROM),
  RMQ_BENCH_RABBITMQ: '3.10',
  RMQ_BENCH_QUIET: '0',
};
const say = (line) => process.stderr.write(`partition-heal${SLOT ? `-${SLOT}` : ''} ${new Date().toISOString().slice(11, 19)}: ${line}\n`);
const secs = (ms) => (ms === null || ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);

/** Each node's own /api/nodes, read here: whole when every node answers, sees all three running, and lists no partition. */
async function wholeByEveryNode() {
  // cluster/definitions.json's user.
  const auth = `Basic ${Buffer.from('demo:demo').toString('base64')}`;
  const problems = [];
  for (const [i, node] of NODES.entries()) {
    try {
      const res = await fetch(`http://127.0.0.1:${MGMT + i}/api/nodes`, { headers: { authorization: auth }, signal: AbortSignal.timeout(5_000) });
      if (!res.ok) {
        problems.push(`${node}: HTTP ${res.status}`);
        continue;
      }
      const list = await res.json();
      const notRunning = list.filter((n) => !n.running).map((n) => n.name);
      const parts = list.flatMap((n) => (n.partitions ?? []).map((p) => `${n.name}|${p}`));
      if (list.length !== NODES.length || notRunning.length > 0 || parts.length > 0)
        problems.push(`${node} sees ${list.length} nodes, not running: ${notRunning.join(',') || 'none'}, partitions: ${parts.join(',') || 'none'}`);
    } catch (err) {
      problems.push(`${node}: ${err.message}`);
    }
  }
  return problems;
}

function startLoad() {
  if (values.load === 'none') return { stop: async () => {} };
  let stopped = false;
  let child;
  const loop = (async () => {
    while (!stopped) {
      child = execa('node', [BIN, 'bench', '--confirm-mode', 'async', '-z', '120s', '-y', '1', '--json'], { reject: false, env: { RMQ_BENCH_QUIET: '1' } });
      await child;
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      child?.kill('SIGINT');
      await loop;
    },
  };
}

const results = [];
const load = startLoad();
say(`load beside the runs: ${values.load === 'none' ? 'none' : "'rmq-bench bench --confirm-mode async' on the default cluster, again and again"}`);
try {
  for (const mode of values.modes.split(',')) {
    say(`cluster up ${NAME}: RabbitMQ 3.10, partition handling ${mode}`);
    const up = await execa('node', [BIN, 'cluster', 'up', '--rabbitmq', '3.10', '--partition-handling', mode, '--json'], {
      reject: false,
      env: ENV,
      timeout: 1_200_000,
    });
    if (up.exitCode !== 0) {
      say(`cluster up failed (exit ${up.exitCode}): ${up.stderr.trim().split('\n').pop()}`);
      process.exitCode = 1;
      break;
    }
    const shapes = values.shapes.split(',');
    for (let i = 0; i < Number(values.runs); i++) {
      const shape = shapes[i % shapes.length];
      const started = performance.now();
      const load1 = os.loadavg()[0].toFixed(1);
      const r = await execa('node', [BIN, 'failover', '--fault', shape, '--hold', values.hold, '--json'], {
        reject: false,
        env: ENV,
        timeout: 1_200_000,
        all: false,
      });
      const elapsedMs = performance.now() - started;
      let doc;
      try {
        doc = JSON.parse(r.stdout);
      } catch {
        doc = undefined;
      }
      const restarts = r.stderr.split('\n').filter((l) => /restarting /.test(l));
      // Whole by every node's own word, at once; else how long until it is (up to 10 min), or never.
      let problems = await wholeByEveryNode();
      const checkStarted = performance.now();
      while (problems.length > 0 && performance.now() - checkStarted < 600_000) {
        await new Promise((res) => setTimeout(res, 2_000));
        problems = await wholeByEveryNode();
      }
      const row = {
        mode,
        run: i + 1,
        shape,
        exitCode: r.exitCode,
        load1,
        electionMs: doc?.electionMs ?? null,
        // Rules removed → the node back with every queue member online: the restore call (the mend
        // inside it) and the rejoin wait after it.
        healMs: doc?.restoreMs != null && doc?.rejoinMs != null ? doc.restoreMs + doc.rejoinMs : null,
        elapsedMs,
        restarts: restarts.length,
        wholeAtExit: performance.now() - checkStarted < 1_000,
        wholeLateMs: problems.length === 0 ? performance.now() - checkStarted : null,
        problems,
      };
      results.push(row);
      say(
        `${mode} #${row.run} ${shape}: exit ${r.exitCode}, load ${load1}, election ${secs(row.electionMs)}, heal (rules removed to whole) ${secs(row.healMs)}, ${row.restarts} restart line(s), ${row.problems.length === 0 ? (row.wholeAtExit ? 'whole' : `whole ${secs(row.wholeLateMs)} after the command ended`) : `NOT WHOLE: ${problems.join('; ')}`}`,
      );
      for (const l of restarts) say(`  ${l.trim()}`);
      if (r.exitCode !== 0) say(`  stderr: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      if (problems.length > 0) {
        say('the cluster stayed split: stopping here');
        process.exitCode = 1;
        break;
      }
    }
    if (process.exitCode === 1) break;
  }
} finally {
  await load.stop();
}

// The table: per mode, runs, whole, failed commands, the longest heal and the longest whole run.
const lines = [
  '| partition handling | runs | whole after each | command failed | restarts (runs with one) | heal, rules removed to whole: median / longest | longest run |',
  '| --- | --- | --- | --- | --- | --- | --- |',
];
for (const mode of values.modes.split(',')) {
  const rows = results.filter((x) => x.mode === mode);
  if (rows.length === 0) continue;
  const heals = rows
    .map((x) => x.healMs)
    .filter((x) => x !== null)
    .sort((a, b) => a - b);
  const median = heals.length ? heals[Math.floor(heals.length / 2)] : null;
  lines.push(
    `| ${mode} | ${rows.length} | ${rows.filter((x) => x.problems.length === 0).length} | ${rows.filter((x) => x.exitCode !== 0).length} | ${rows.filter((x) => x.restarts > 0).length} | ${secs(median)} / ${secs(heals.at(-1))} | ${secs(Math.max(...rows.map((x) => x.elapsedMs)))} |`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
process.stdout.write(
  `load average (1 min) at the runs' starts: ${Math.min(...results.map((x) => Number(x.load1)))} to ${Math.max(...results.map((x) => Number(x.load1)))}\n`,
);
