// Loaded into every node process of a measured test run (bench/test-cost.mjs sets NODE_OPTIONS
// to --require this file): at exit, one JSON line with what the process ran, the CPU it used
// (process.cpuUsage: user + system) and its HTTP requests (fetch), appended to RMQ_BENCH_CPU_LOG.
// A process killed by a signal writes nothing. Measurement only: nothing in the shipped CLI loads it.
'use strict';
const { appendFileSync } = require('node:fs');

const log = process.env.RMQ_BENCH_CPU_LOG;
const startedAt = Date.now();
// HTTP requests by method and path (the management API, numbers and names folded): which
// commands poll the brokers, and how often.
const requests = {};
if (log && typeof globalThis.fetch === 'function') {
  const real = globalThis.fetch;
  globalThis.fetch = function counted(input, init) {
    try {
      const u = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
      const key = `${init?.method ?? 'GET'} ${u.pathname.replace(/\/api\/(queues|exchanges|bindings|policies|consumers|connections|channels)\/.*/, '/api/$1/…')}`;
      requests[key] = (requests[key] ?? 0) + 1;
    } catch {
      // never fail the request for the count
    }
    return real.call(this, input, init);
  };
}
if (log) {
  process.on('exit', () => {
    const u = process.cpuUsage();
    const line = {
      argv: process.argv.slice(1),
      cpuS: (u.user + u.system) / 1e6,
      wallS: (Date.now() - startedAt) / 1000,
      cluster: process.env.RMQ_BENCH_NAME ?? '',
      requests,
    };
    try {
      appendFileSync(log, `${JSON.stringify(line)}\n`);
    } catch {
      // The log is a measurement aid: never fail the process for it.
    }
  });
}
