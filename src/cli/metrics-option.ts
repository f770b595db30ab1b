import { InvalidArgumentError, Option } from 'commander';
import type { Registry } from 'prom-client';
import type { Progress } from '../progress.js';

/** --metrics-port <port> (bench, chaos): a port number, 0 for a free one. */
export function metricsPort(value: string): number {
  const v = value.trim();
  if (!/^\d+$/.test(v) || Number(v) > 65_535) throw new InvalidArgumentError(`'${value}' is not a port (0 to 65535; 0 picks a free one)`);
  return Number(v);
}

export const metricsPortOption = (): Option =>
  new Option(
    '--metrics-port <port>',
    'serve the live figures in Prometheus format on http://127.0.0.1:<port>/metrics while the run goes on (0: a free port; the address goes to stderr)',
  ).argParser(metricsPort);

/**
 * `body` with a Prometheus exporter on 127.0.0.1:`port` for its length (measure/metrics-export.ts),
 * or with none when `port` is undefined. The exporter's address goes to stderr; it closes when
 * `body` ends, however it ends.
 */
export async function withMetricsExport<T>(progress: Progress, port: number | undefined, body: (registry: Registry | undefined) => Promise<T>): Promise<T> {
  if (port === undefined) return body(undefined);
  const { newMetricsRegistry, serveMetrics } = await import('../measure/metrics-export.js');
  const registry = newMetricsRegistry();
  const server = await serveMetrics(registry, port);
  progress.info(`metrics: ${server.url} (Prometheus text format, while the run goes on)`);
  try {
    return await body(registry);
  } finally {
    await server.close();
  }
}
