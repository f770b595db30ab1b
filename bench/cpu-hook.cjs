// Loaded into every node process of a measured test run (bench/test-cost.mjs sets NODE_OPTIONS
// to --require this file): at exit, one JSON line with what the process ran and the CPU it used
// (process.cpuUsage: user + system), appended to RMQ_BENCH_CPU_LOG. A process killed by a signal
// writes nothing. Measurement only: nothing in the shipped CLI loads it.
'use strict';
const { appendFileSync } = require('node:fs');

const log = process.env.RMQ_BENCH_CPU_LOG;
const startedAt = Date.now();
if (log) {
  process.on('exit', () => {
    const u = process.cpuUsage();
    const line = {
      argv: process.argv.slice(1),
      cpuS: (u.user + u.system) / 1e6,
      wallS: (Date.now() - startedAt) / 1000,
      cluster: process.env.RMQ_BENCH_NAME ?? '',
    };
    try {
      appendFileSync(log, `${JSON.stringify(line)}\n`);
    } catch {
      // The log is a measurement aid: never fail the process for it.
    }
  });
}
