#!/usr/bin/env node
// Each fault kind under traffic: `rmq-bench compare --confirms on --fault <kind> --json`, several
// runs each, on the cluster RMQ_BENCH_* names (the default one otherwise). Per kind: the election
// (fault issued → new leader seen), the producer's longest stall, the rejoin (restore → the node
// back with every member online, stable 3 s) and the confirmed messages lost. Not a test: it
// prints figures (the README's failover table).
//   npx tsc -p tsconfig.json && node bench/failover-faults.mjs [--faults kill,partition-halves] [--runs 3] [-n 5000] [--rate 250]
// A fault that awaits no election (ring, bridge, slow-link, latency, rolling-restart, quorum-loss)
// shows '-' for it. The ring needs a 5-node cluster (RMQ_BENCH_NODES=5, or one `cluster up
// --nodes 5` recorded); on 3 it is refused and the row says so.
import { execa } from 'execa';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'rmq-bench.js');
const { values } = parseArgs({
  options: {
    faults: {
      type: 'string',
      default: 'kill,stop,pause,disconnect,partition,partition-halves,partition-ring,partition-bridge,slow-link,quorum-loss,rolling-restart,membership',
    },
    runs: { type: 'string', default: '3' },
    count: { type: 'string', short: 'n', default: '5000' },
    rate: { type: 'string', default: '250' },
  },
});
const s = (ms) => (ms === null || ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);
const range = (xs) => {
  const v = xs.filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  if (v.length === 0) return '-';
  return v[0] === v.at(-1) ? s(v[0]) : `${s(v[0])}–${s(v.at(-1))}`;
};

const rows = [];
for (const fault of values.faults.split(',')) {
  const args = [BIN, 'compare', '--confirms', 'on', '--fault', fault, '-n', values.count, '--rate', values.rate, '--runs', values.runs, '--json'];
  const r = await execa('node', args, { reject: false, timeout: 3_600_000, env: { RMQ_BENCH_QUIET: '1' } });
  if (r.exitCode !== 0 && r.exitCode !== 1) {
    process.stderr.write(`${fault}: exit ${r.exitCode}: ${r.stderr.trim().split('\n').pop()}\n`);
    rows.push([fault, '0', `refused or failed (exit ${r.exitCode})`, '', '', '']);
    continue;
  }
  const d = JSON.parse(r.stdout);
  const runs = d.runs;
  for (const run of runs) {
    const f = run.fault ?? {};
    const rejoin = f.rejoinedAtMs != null && f.restoredAtMs != null ? f.rejoinedAtMs - f.restoredAtMs : null;
    process.stderr.write(
      `${fault} run ${run.run}: election ${s(f.electionMs)}, stall ${s(run.producer.longestStallMs)}, rejoin ${s(rejoin)}, lost ${run.reconciliation.lost}${f.shape ? ` [${f.shape}]` : ''}${f.error ? `; ${f.error}` : ''}\n`,
    );
  }
  const lost = runs.reduce((a, run) => a + run.reconciliation.lost, 0);
  const confirmed = runs.reduce((a, run) => a + run.reconciliation.counts.confirmed, 0);
  rows.push([
    fault,
    String(runs.length),
    range(runs.map((run) => run.fault?.electionMs)),
    range(runs.map((run) => run.producer.longestStallMs)),
    range(runs.map((run) => (run.fault?.rejoinedAtMs != null && run.fault?.restoredAtMs != null ? run.fault.rejoinedAtMs - run.fault.restoredAtMs : null))),
    `${lost} of ${confirmed.toLocaleString('en-US')}`,
  ]);
}
const head = ['fault', 'runs', 'election', 'longest stall', 'rejoin', 'confirmed lost'];
const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => cells.map((c, i) => c.padEnd(width[i])).join('  ');
console.log(line(head));
console.log(line(width.map((w) => '-'.repeat(w))));
for (const r of rows) console.log(line(r));
