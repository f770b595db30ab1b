import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { PortTakenError } from '../errors.js';
import type { BenchSample } from './meter.js';

/**
 * --metrics-port: the live figures of a long run (bench, chaos) in Prometheus's text format, on
 * http://127.0.0.1:<port>/metrics, for a Prometheus of the user's (or `curl`) to scrape while the
 * run goes on, as PerfTest and omq export theirs. Loopback only: a bench's figures are not for
 * the network. The registry (prom-client) holds this process's default metrics (CPU, memory,
 * event loop) beside the run's own, all prefixed `rmq_bench_`; the feeders below turn the
 * scenarios' per-second samples into them, and never print.
 */

/** Where the exporter listens, once it does, and how to stop it. */
export interface MetricsServer {
  readonly url: string;
  close(): Promise<void>;
}

export const METRICS_PREFIX = 'rmq_bench_';

export function newMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: METRICS_PREFIX });
  return registry;
}

/** Listen on 127.0.0.1:`port` (0: a free port). A port another process holds is a PortTakenError (exit 75). */
export async function serveMetrics(registry: Registry, port: number): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '/').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the metrics are at /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new PortTakenError(port, '--metrics-port', { hint: `give another --metrics-port, or 0 for a free one` }) : err),
    );
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** bench: each run's (mode's) counts and latencies, labelled by the run (`async/256`, `1.0 none`). */
export function benchMetrics(registry: Registry): (run: string, s: BenchSample) => void {
  const labelNames = ['run'] as const;
  const counters = {
    published: new Counter({ name: `${METRICS_PREFIX}published_messages_total`, help: 'messages published', labelNames, registers: [registry] }),
    confirmed: new Counter({ name: `${METRICS_PREFIX}confirmed_messages_total`, help: 'publisher confirms received', labelNames, registers: [registry] }),
    nacked: new Counter({
      name: `${METRICS_PREFIX}nacked_messages_total`,
      help: 'publishes the broker refused (nack, rejected outcome)',
      labelNames,
      registers: [registry],
    }),
    consumed: new Counter({ name: `${METRICS_PREFIX}consumed_messages_total`, help: 'deliveries consumed', labelNames, registers: [registry] }),
  };
  const latency = {
    confirm: new Gauge({
      name: `${METRICS_PREFIX}confirm_latency_seconds`,
      help: 'confirm latency over the last second, by quantile',
      labelNames: ['run', 'quantile'] as const,
      registers: [registry],
    }),
    e2e: new Gauge({
      name: `${METRICS_PREFIX}end_to_end_latency_seconds`,
      help: 'publish-to-consume latency over the last second, by quantile',
      labelNames: ['run', 'quantile'] as const,
      registers: [registry],
    }),
  };
  return (run, s) => {
    counters.published.inc({ run }, s.published);
    counters.confirmed.inc({ run }, s.confirmed);
    counters.nacked.inc({ run }, s.nacked);
    counters.consumed.inc({ run }, s.consumed);
    for (const [gauge, summary] of [
      [latency.confirm, s.confirmLatency],
      [latency.e2e, s.e2eLatency],
    ] as const) {
      for (const [quantile, ms] of [
        ['0.5', summary.p50Ms],
        ['0.99', summary.p99Ms],
      ] as const) {
        if (ms !== null) gauge.set({ run, quantile }, ms / 1000);
      }
    }
  };
}

/** chaos's live line, as numbers: the confirming producers' totals, what is in flight, and the fault on now. */
export interface ChaosMetricsSample {
  written: number;
  confirmed: number;
  consumed: number;
  inFlight: number;
  controlWritten: number | null;
  /** The kind of the fault on now, or null in calm. */
  faultKind: string | null;
}

/** chaos: cumulative counts as counters (each sample adds what is new), in flight and the fault on now as gauges. */
export function chaosMetrics(registry: Registry): (s: ChaosMetricsSample) => void {
  const counter = (what: string, help: string) => new Counter({ name: `${METRICS_PREFIX}chaos_${what}_messages_total`, help, registers: [registry] });
  const counters = {
    written: counter('written', 'messages the confirming producers wrote'),
    confirmed: counter('confirmed', 'confirms the confirming producers received'),
    consumed: counter('consumed', 'deliveries the consumers processed'),
    controlWritten: counter('control_written', 'messages the control producer (no confirms) wrote'),
  };
  const inFlight = new Gauge({ name: `${METRICS_PREFIX}chaos_in_flight_messages`, help: 'messages awaiting a confirm', registers: [registry] });
  const fault = new Gauge({
    name: `${METRICS_PREFIX}chaos_fault_active`,
    help: '1 while a fault of this kind is on',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const last = { written: 0, confirmed: 0, consumed: 0, controlWritten: 0 };
  let lastKind: string | null = null;
  return (s) => {
    for (const key of ['written', 'confirmed', 'consumed'] as const) {
      counters[key].inc(Math.max(0, s[key] - last[key]));
      last[key] = Math.max(last[key], s[key]);
    }
    if (s.controlWritten !== null) {
      counters.controlWritten.inc(Math.max(0, s.controlWritten - last.controlWritten));
      last.controlWritten = Math.max(last.controlWritten, s.controlWritten);
    }
    inFlight.set(s.inFlight);
    if (lastKind !== null && lastKind !== s.faultKind) fault.set({ kind: lastKind }, 0);
    if (s.faultKind !== null) fault.set({ kind: s.faultKind }, 1);
    lastKind = s.faultKind;
  };
}
