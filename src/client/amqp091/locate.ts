import type { ChannelModel } from 'amqplib';
import type { Context } from '../../context.js';
import { errorMessage } from '../../errors.js';
import { amqpUrl, streamUrl } from '../../config.js';
import { retryUntil } from '../../util/retry.js';
import { closeWithin, connectAny } from './connect.js';

interface ConnectionRow {
  node?: string;
  client_properties?: { connection_name?: string };
}

/**
 * Which broker node each AMQP URL lands on, for a cluster whose URLs do not name its nodes
 * (a load balancer, DNS names): open one tagged connection per URL and find it in the
 * management API's connection list. undefined where a URL does not answer or is not listed
 * in time.
 */
async function nodeOfEachUrl(ctx: Context, urls: readonly string[], options: { heartbeatS: number; timeoutMs?: number }): Promise<(string | undefined)[]> {
  const tag = `rmq-bench-probe-${Math.random().toString(36).slice(2, 8)}`;
  const conns: (ChannelModel | undefined)[] = [];
  try {
    for (let i = 0; i < urls.length; i++) {
      try {
        const c = await connectAny([urls[i]!], 0, { heartbeatS: options.heartbeatS, timeoutMs: 3_000, connectionName: `${tag}-${i}`, signal: ctx.signal });
        c.connection.on('error', () => undefined);
        conns.push(c.connection);
      } catch {
        conns.push(undefined);
      }
    }
    const wanted = conns.map((c, i) => (c ? `${tag}-${i}` : undefined));
    const rows = await retryUntil(
      async () => (await ctx.management.get('/api/connections?columns=node,client_properties')) as ConnectionRow[],
      (list) => wanted.every((w) => w === undefined || list.some((r) => r.client_properties?.connection_name === w)),
      {
        timeoutMs: options.timeoutMs ?? 10_000,
        intervalMs: 250,
        signal: ctx.signal,
        describe: (l) => `probe connections not listed (${l.error ? errorMessage(l.error) : 'not yet'})`,
      },
    ).catch(() => [] as ConnectionRow[]);
    return wanted.map((w) => (w === undefined ? undefined : rows.find((r) => r.client_properties?.connection_name === w)?.node));
  } finally {
    for (const c of conns) if (c) await closeWithin(c);
  }
}

/** The AMQP URLs to use, and the node each lands on (to connect to a queue's leader first, to know a producer's node). */
export interface Endpoints {
  urls: string[];
  nodes: (string | undefined)[];
  /** The same nodes' native stream protocol URLs (our cluster's; none for the user's --urls). */
  streamUrls?: string[];
}

/** Our cluster's URLs (rabbit1..3), or the user's --urls with the node each reaches. */
export async function endpointsFor(ctx: Context, urls: string[] | undefined, heartbeatS: number): Promise<Endpoints> {
  const { config } = ctx;
  if (!urls) {
    const { nodes } = config;
    return { urls: nodes.map((n) => amqpUrl(config, n)), nodes: nodes.map((n) => n.nodeName), streamUrls: nodes.map((n) => streamUrl(config, n)) };
  }
  ctx.progress.start(`finding which node each of the ${urls.length} URLs reaches`);
  const nodes = await nodeOfEachUrl(ctx, urls, { heartbeatS });
  ctx.progress.succeed(`URLs reach: ${nodes.map((n) => n ?? '?').join(', ')}`);
  return { urls, nodes };
}
