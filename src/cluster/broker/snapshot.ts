import { BrokerUnavailableError } from '../../errors.js';
import { describeRequestError, HttpError, type ManagementClient, type NodeInfo } from './management.js';

/**
 * One snapshot of the management API (queues, exchanges, bindings, policies, nodes, overview),
 * typed, and the reader that takes it from one node, falling over to the next. Used by the
 * audit and watch scenarios alike.
 */

export interface QueueInfo {
  name: string;
  vhost: string;
  type?: string;
  durable?: boolean;
  auto_delete?: boolean;
  exclusive?: boolean;
  state?: string;
  arguments?: Record<string, unknown>;
  policy?: string | null;
  effective_policy_definition?: Record<string, unknown>;
  /** 4.x: a number, or 'unlimited'. Missing until the queue's first statistics (about 5 s). */
  delivery_limit?: number | string;
  members?: string[];
  online?: string[];
  leader?: string;
  node?: string;
  messages?: number;
  messages_ready?: number;
  messages_unacknowledged?: number;
  /** 4.3 delayed retry: messages waiting for their retry delay. */
  messages_delayed?: number;
  consumers?: number;
  message_stats?: Record<string, unknown>;
}

export interface ExchangeInfo {
  name: string;
  vhost: string;
  type: string;
  durable?: boolean;
  auto_delete?: boolean;
  internal?: boolean;
  arguments?: Record<string, unknown>;
}

export interface BindingInfo {
  source: string;
  vhost: string;
  destination: string;
  destination_type: string;
  routing_key: string;
  arguments?: Record<string, unknown>;
}

export interface PolicyInfo {
  name: string;
  vhost: string;
  pattern: string;
  'apply-to'?: string;
  priority?: number;
  definition: Record<string, unknown>;
}

/** One consumer (/api/consumers): the queue it reads, and the arguments it subscribed with. */
export interface ConsumerInfo {
  queue: { name: string; vhost: string };
  consumer_tag: string;
  ack_required?: boolean;
  /** basic.qos per consumer: 0 is no limit. */
  prefetch_count?: number;
  arguments?: Record<string, unknown>;
}

/** One feature flag (/api/feature-flags): `state` enabled, disabled or unavailable; `stability` required, stable or experimental. */
export interface FeatureFlagInfo {
  name: string;
  state: string;
  stability?: string;
  desc?: string;
}

export interface OverviewInfo {
  cluster_name?: string;
  rabbitmq_version?: string;
  product_version?: string;
  node?: string;
  /**
   * Totals over the cluster since its nodes started (each node's share is reset when it
   * restarts), with *_details rates beside them. A key is absent until its count is non-zero
   * (drop_unroutable: non-mandatory messages no binding matched; return_unroutable: mandatory
   * ones returned with basic.return); the whole object is absent when the management agent
   * collects no metrics (management_agent.disable_metrics_collector).
   */
  message_stats?: { drop_unroutable?: number; return_unroutable?: number } & Record<string, unknown>;
}

export interface BrokerSnapshot {
  overview: OverviewInfo;
  nodes: NodeInfo[];
  queues: QueueInfo[];
  exchanges: ExchangeInfo[];
  bindings: BindingInfo[];
  policies: PolicyInfo[];
  /** Absent in snapshots made before consumers were read (test fixtures): none. */
  consumers?: ConsumerInfo[];
  /** Absent in snapshots made before feature flags were read (test fixtures): none. */
  featureFlags?: FeatureFlagInfo[];
}

// ---------------------------------------------------------------------------------------
// Reading: every path of one snapshot from one node, falling over to the next.

export interface Endpoint {
  node: string;
  url: string;
}

export interface Unanswered extends Endpoint {
  error: string;
  /** When it first failed to answer (ISO time). */
  since: string;
}

export interface ReadResult {
  bodies: unknown[];
  answeredBy: Endpoint;
  /** Endpoints that did not answer when last asked (before the one that answered, or earlier). */
  unanswered: Unanswered[];
}

export interface ReaderOptions {
  /**
   * After moving off the first endpoint, ask it again after this long (so that a node that is
   * back is used and no longer reported). undefined: stay with the one that answered.
   */
  retryFirstAfterMs?: number | undefined;
  now?: () => number;
}

/**
 * Asks the management API for several paths at once, all from the same node, so that one
 * snapshot is consistent. It starts with the node that answered last; a node that refuses,
 * times out (ManagementClient's per-request timeout) or answers 503 is skipped, and reported
 * until it answers again. Any other HTTP error (401, 404) is the cluster's answer and is
 * thrown at once.
 */
export class SnapshotReader {
  private preferred = 0;
  private movedAtMs = 0;
  private readonly down = new Map<string, Unanswered>();
  private readonly now: () => number;

  constructor(
    private readonly management: ManagementClient,
    private readonly options: ReaderOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  async read(paths: readonly string[]): Promise<ReadResult> {
    const eps = this.management.endpoints;
    const retry = this.options.retryFirstAfterMs;
    if (this.preferred !== 0 && retry !== undefined && this.now() - this.movedAtMs >= retry) this.preferred = 0;
    const start = this.preferred;
    for (let i = 0; i < eps.length; i++) {
      const idx = (start + i) % eps.length;
      const ep = eps[idx]!;
      try {
        const bodies = await Promise.all(paths.map((p) => this.management.requestOn(ep.url, 'GET', p)));
        this.down.delete(ep.url);
        if (i > 0) this.movedAtMs = this.now();
        this.preferred = idx;
        return { bodies, answeredBy: { node: ep.node, url: ep.url }, unanswered: [...this.down.values()] };
      } catch (err) {
        if (err instanceof HttpError && err.status !== 503) throw err;
        const since = this.down.get(ep.url)?.since ?? new Date(this.now()).toISOString();
        this.down.set(ep.url, { node: ep.node, url: ep.url, error: describeRequestError(err), since });
      }
    }
    throw new BrokerUnavailableError(`no management endpoint answered (${[...this.down.values()].map((u) => `${u.node} ${u.url}: ${u.error}`).join('; ')})`, {
      hint: "is the cluster up? 'rmq-bench cluster up' starts it; for another cluster pass --management-urls",
    });
  }
}

export const SNAPSHOT_PATHS = [
  '/api/overview',
  '/api/nodes',
  '/api/queues',
  '/api/exchanges',
  '/api/bindings',
  '/api/policies',
  '/api/consumers',
  '/api/feature-flags',
] as const;

function list<T>(v: unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

export function snapshotOf(bodies: readonly unknown[]): BrokerSnapshot {
  const [overview, nodes, queues, exchanges, bindings, policies, consumers, featureFlags] = bodies;
  return {
    overview: (overview ?? {}) as OverviewInfo,
    nodes: list<NodeInfo>(nodes),
    queues: list<QueueInfo>(queues),
    exchanges: list<ExchangeInfo>(exchanges),
    bindings: list<BindingInfo>(bindings),
    policies: list<PolicyInfo>(policies),
    consumers: list<ConsumerInfo>(consumers),
    featureFlags: list<FeatureFlagInfo>(featureFlags),
  };
}

export async function readBroker(reader: SnapshotReader): Promise<{ snapshot: BrokerSnapshot; answeredBy: Endpoint; unanswered: Unanswered[] }> {
  const r = await reader.read(SNAPSHOT_PATHS);
  return { snapshot: snapshotOf(r.bodies), answeredBy: r.answeredBy, unanswered: r.unanswered };
}

// ---------------------------------------------------------------------------------------
// Naming the objects of a snapshot. Pure.

/** An object's identity within the cluster: vhost\0name. */
export const objectKey = (vhost: string, name: string): string => `${vhost}\u0000${name}`;

/** `queue demo.orders`, or `queue q (vhost v)` outside '/'. */
export function objectName(kind: string, vhost: string, name: string): string {
  const shown = name === '' ? "'' (the default exchange)" : name;
  return vhost === '/' ? `${kind} ${shown}` : `${kind} ${shown} (vhost ${vhost})`;
}

/** The leader a queue reports, if any (the API says '' or 'undefined' while it has none). */
export const leaderOf = (q: QueueInfo): string | undefined => (q.leader && q.leader !== '' && q.leader !== 'undefined' ? q.leader : undefined);
