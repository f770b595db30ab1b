#!/usr/bin/env node
// Each fault kind's election and rejoin, measured with `rmq-bench failover --json` several times
// on the cluster RMQ_BENCH_* names (the default one otherwise). Not a test: it prints figures.
//   npx tsc -p tsconfig.json && node bench/failover-faults.mjs [--faults kill,partition-halves] [--runs 3]
// A fault that awaits no election (ring, bridge, slow-link, latency, rolling-restart, quorum-loss)
// shows '-' for it, and who led once every member was back.
import { execa } from 'execa';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'rmq-bench.js');
const { values } = parseArgs({
  options: {
    faults: { type: 'string', default: 'partition-halves,partition-bridge,slow-link,rolling-restart,membership' },
    runs: { type: 'string', default: '3' },
  },
});
const runs = Number(values.runs);
const s = (ms) => (ms === null || ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);
const range = (xs) => {
  const v = xs.filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  if (v.length === 0) return '-';
  return v[0] === v.at(-1) ? s(v[0]) : `${s(v[0])}–${s(v.at(-1))}`;
};

const rows = [];
for (const fault of values.faults.split(',')) {
  const got = [];
  for (let i = 0; i < runs; i++) {
    const r = await execa('node', [BIN, 'failover', '--fault', fault, '--json'], { reject: false, timeout: 600_000, env: { RMQ_BENCH_QUIET: '1' } });
    if (r.exitCode !== 0) {
      process.stderr.write(`${fault} run ${i + 1}: exit ${r.exitCode}: ${r.stderr.trim().split('\n').pop()}\n`);
      continue;
    }
    const d = JSON.parse(r.stdout);
    got.push(d);
    process.stderr.write(
      `${fault} run ${i + 1}: election ${s(d.electionMs)}, held ${s(d.downMs)}, rejoin ${s(d.rejoinMs)}, leader after ${d.leaderAfter}${d.shape ? ` [${d.shape}]` : ''}\n`,
    );
  }
  rows.push([fault, String(got.length), range(got.map((d) => d.electionMs)), range(got.map((d) => d.downMs)), range(got.map((d) => d.rejoinMs))]);
}
const head = ['fault', 'runs', 'election', 'held', 'rejoin'];
const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => cells.map((c, i) => c.padEnd(width[i])).join('  ');
console.log(line(head));
console.log(line(width.map((w) => '-'.repeat(w))));
for (const r of rows) console.log(line(r));
