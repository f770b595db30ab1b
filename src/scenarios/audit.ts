import type { ManagementClient, NodeInfo } from '../cluster/management.js';
import { HttpError } from '../cluster/management.js';
import type { Context } from '../context.js';
import { BrokerUnavailableError } from '../errors.js';

/**
 * `rmq-bench audit`: the checklist of both articles, as pure checks over one snapshot of the
 * management API (queues, exchanges, bindings, policies, nodes, overview). runAudit reads the
 * snapshot and returns data; it never prints.
 *
 * Effective settings are worked out the way RabbitMQ does: only the highest-priority policy
 * that matches a queue applies (its keys replace, never merge with, a lower one's); queue
 * arguments win over the policy for dead-letter-exchange and dead-letter-routing-key, the
 * smaller value wins for message-ttl and delivery-limit (a negative delivery-limit is
 * "unlimited" and yields to the other). The policies are matched here rather than read from
 * the queue's `effective_policy_definition`, because the management API refreshes that only
 * with its statistics (every 5 s): a policy set a moment ago is already in /api/policies.
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

export interface OverviewInfo {
  cluster_name?: string;
  rabbitmq_version?: string;
  product_version?: string;
  node?: string;
}

export interface BrokerSnapshot {
  overview: OverviewInfo;
  nodes: NodeInfo[];
  queues: QueueInfo[];
  exchanges: ExchangeInfo[];
  bindings: BindingInfo[];
  policies: PolicyInfo[];
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

/** 'fetch failed' says nothing: its cause's code (ECONNREFUSED) or message does. */
export function describeRequestError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as Error & { cause?: unknown }).cause;
  if (typeof cause === 'object' && cause !== null) {
    const code = 'code' in cause ? (cause as { code: unknown }).code : undefined;
    if (typeof code === 'string' && code !== '') return code;
    if (cause instanceof Error && cause.message !== '') return `${err.message}: ${cause.message}`;
  }
  return err.message.split('\n')[0] ?? err.message;
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
      hint: "is the cluster up? 'rmq-bench cluster up' starts it; for another cluster pass --management-url",
    });
  }
}

export const SNAPSHOT_PATHS = ['/api/overview', '/api/nodes', '/api/queues', '/api/exchanges', '/api/bindings', '/api/policies'] as const;

function list<T>(v: unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

export function snapshotOf(bodies: readonly unknown[]): BrokerSnapshot {
  const [overview, nodes, queues, exchanges, bindings, policies] = bodies;
  return {
    overview: (overview ?? {}) as OverviewInfo,
    nodes: list<NodeInfo>(nodes),
    queues: list<QueueInfo>(queues),
    exchanges: list<ExchangeInfo>(exchanges),
    bindings: list<BindingInfo>(bindings),
    policies: list<PolicyInfo>(policies),
  };
}

export async function readBroker(reader: SnapshotReader): Promise<{ snapshot: BrokerSnapshot; answeredBy: Endpoint; unanswered: Unanswered[] }> {
  const r = await reader.read(SNAPSHOT_PATHS);
  return { snapshot: snapshotOf(r.bodies), answeredBy: r.answeredBy, unanswered: r.unanswered };
}

// ---------------------------------------------------------------------------------------
// Effective settings. Pure.

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

const key = (vhost: string, name: string): string => `${vhost}\u0000${name}`;

/** `queue demo.orders`, or `queue q (vhost v)` outside '/'. */
export function objectName(kind: string, vhost: string, name: string): string {
  const shown = name === '' ? "'' (the default exchange)" : name;
  return vhost === '/' ? `${kind} ${shown}` : `${kind} ${shown} (vhost ${vhost})`;
}

function regexOf(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern);
  } catch {
    return undefined;
  }
}

/** Does a policy's apply-to cover this object? */
function appliesTo(applyTo: string | undefined, target: 'queue' | 'exchange', queueType: string | undefined): boolean {
  const a = applyTo ?? 'all';
  if (a === 'all') return true;
  if (target === 'exchange') return a === 'exchanges';
  if (a === 'queues') return true;
  if (a === 'classic_queues') return queueType === undefined || queueType === 'classic';
  if (a === 'quorum_queues') return queueType === 'quorum';
  if (a === 'streams') return queueType === 'stream';
  return false;
}

/** Policies matching an object, highest priority first. */
export function matchingPolicies(policies: readonly PolicyInfo[], vhost: string, name: string, target: 'queue' | 'exchange', queueType?: string): PolicyInfo[] {
  return policies
    .filter((p) => p.vhost === vhost && appliesTo(p['apply-to'], target, queueType) && regexOf(p.pattern)?.test(name) === true)
    .sort((a, b) => (b.priority ?? 0) - (a.priority ?? 0));
}

export interface DeliveryLimit {
  /** null: unlimited. */
  limit: number | null;
  source: 'argument' | 'policy' | 'argument and policy' | 'broker default' | 'not set';
}

export interface EffectiveQueue {
  queue: QueueInfo;
  key: string;
  type: string;
  /** The policy that applies (RabbitMQ applies one), and those it shadows. */
  policy: PolicyInfo | undefined;
  shadowed: PolicyInfo[];
  dlx: string | undefined;
  dlxFrom: 'argument' | 'policy' | undefined;
  dlRoutingKey: string | undefined;
  messageTtlMs: number | undefined;
  deliveryLimit: DeliveryLimit | undefined;
}

function resolveLimit(arg: number | undefined, pol: number | undefined): number | undefined {
  if (arg === undefined) return pol;
  if (pol === undefined) return arg;
  if (arg < 0 || pol < 0) return Math.max(arg, pol);
  return Math.min(arg, pol);
}

function majorVersion(overview: OverviewInfo): number | undefined {
  const m = /^(\d+)\./.exec(overview.rabbitmq_version ?? overview.product_version ?? '');
  return m ? Number(m[1]) : undefined;
}

export function effectiveQueue(q: QueueInfo, policies: readonly PolicyInfo[], overview: OverviewInfo): EffectiveQueue {
  const type = q.type ?? str(q.arguments?.['x-queue-type']) ?? 'classic';
  const matching = matchingPolicies(policies, q.vhost, q.name, 'queue', type);
  const top = matching.filter((p) => (p.priority ?? 0) === (matching[0]?.priority ?? 0));
  // Between policies of equal priority the broker's own answer (queue.policy) decides.
  const policy = top.find((p) => p.name === q.policy) ?? top[0];
  const def = policy?.definition ?? {};
  const args = q.arguments ?? {};
  const argDlx = str(args['x-dead-letter-exchange']);
  const polDlx = str(def['dead-letter-exchange']);
  let deliveryLimit: DeliveryLimit | undefined;
  if (type === 'quorum') {
    const a = num(args['x-delivery-limit']);
    const p = num(def['delivery-limit']);
    const explicit = resolveLimit(a, p);
    if (explicit !== undefined) {
      deliveryLimit = { limit: explicit < 0 ? null : explicit, source: a !== undefined && p !== undefined ? 'argument and policy' : a !== undefined ? 'argument' : 'policy' };
    } else if (q.delivery_limit !== undefined) {
      const reported = q.delivery_limit;
      deliveryLimit = { limit: typeof reported === 'number' && reported >= 0 ? reported : null, source: 'broker default' };
    } else {
      // 4.0 made 20 the default; before it, unset meant unlimited.
      const major = majorVersion(overview);
      deliveryLimit = major !== undefined && major >= 4 ? { limit: 20, source: 'broker default' } : { limit: null, source: 'not set' };
    }
  }
  return {
    queue: q,
    key: key(q.vhost, q.name),
    type,
    policy,
    shadowed: matching.filter((p) => p !== policy),
    dlx: argDlx ?? polDlx,
    dlxFrom: argDlx !== undefined ? 'argument' : polDlx !== undefined ? 'policy' : undefined,
    dlRoutingKey: str(args['x-dead-letter-routing-key']) ?? str(def['dead-letter-routing-key']),
    messageTtlMs: minDefined(num(args['x-message-ttl']), num(def['message-ttl'])),
    deliveryLimit,
  };
}

// ---------------------------------------------------------------------------------------
// Routing and the dead-letter graph. Pure.

/** AMQP topic matching: '*' is one word, '#' zero or more. */
export function topicMatches(pattern: string, routingKey: string): boolean {
  const p = pattern === '' ? [] : pattern.split('.');
  const k = routingKey === '' ? [] : routingKey.split('.');
  const match = (i: number, j: number): boolean => {
    if (i === p.length) return j === k.length;
    if (p[i] === '#') {
      for (let n = j; n <= k.length; n++) if (match(i + 1, n)) return true;
      return false;
    }
    if (j === k.length) return false;
    return (p[i] === '*' || p[i] === k[j]) && match(i + 1, j + 1);
  };
  return match(0, 0);
}

export interface Route {
  /** Queue keys (vhost\0name) a message reaches. */
  queues: Set<string>;
  /** Exchanges on the way that do not exist. */
  missing: string[];
  /** Exchanges routed on something other than the key (headers, plugins): all their bindings counted. */
  notEvaluated: string[];
}

export class Topology {
  readonly queues = new Map<string, EffectiveQueue>();
  readonly exchanges = new Map<string, ExchangeInfo>();
  private readonly bySource = new Map<string, BindingInfo[]>();
  private readonly byDestination = new Map<string, BindingInfo[]>();
  /** Dead-letter edges: queue key → queue keys its dead letters reach. */
  readonly deadLetterEdges = new Map<string, Route & { keys: string[]; unknownKey: boolean }>();
  /** Queue keys that receive dead letters from some other queue. */
  readonly deadLetterTargets = new Set<string>();

  constructor(readonly snapshot: BrokerSnapshot) {
    for (const e of snapshot.exchanges) this.exchanges.set(key(e.vhost, e.name), e);
    for (const b of snapshot.bindings) {
      const s = key(b.vhost, b.source);
      this.bySource.set(s, [...(this.bySource.get(s) ?? []), b]);
      if (b.destination_type === 'queue') {
        const d = key(b.vhost, b.destination);
        this.byDestination.set(d, [...(this.byDestination.get(d) ?? []), b]);
      }
    }
    for (const q of snapshot.queues) this.queues.set(key(q.vhost, q.name), effectiveQueue(q, snapshot.policies, snapshot.overview));
    for (const eq of this.queues.values()) {
      if (eq.dlx === undefined) continue;
      const edge = this.deadLetterRoute(eq);
      this.deadLetterEdges.set(eq.key, edge);
      for (const t of edge.queues) if (t !== eq.key) this.deadLetterTargets.add(t);
    }
  }

  /** Where a message published to `exchange` with `routingKey` goes. */
  route(vhost: string, exchange: string, routingKey: string | undefined, seen = new Set<string>()): Route {
    const out: Route = { queues: new Set(), missing: [], notEvaluated: [] };
    const k = key(vhost, exchange);
    if (seen.has(k)) return out;
    seen.add(k);
    if (exchange === '') {
      if (routingKey !== undefined && this.queues.has(key(vhost, routingKey))) out.queues.add(key(vhost, routingKey));
      return out;
    }
    const ex = this.exchanges.get(k);
    if (!ex) {
      out.missing.push(exchange);
      return out;
    }
    const bindings = this.bySource.get(k) ?? [];
    let matched: BindingInfo[];
    if (ex.type === 'fanout') matched = bindings;
    else if (ex.type === 'direct') matched = routingKey === undefined ? [] : bindings.filter((b) => b.routing_key === routingKey);
    else if (ex.type === 'topic') matched = routingKey === undefined ? [] : bindings.filter((b) => topicMatches(b.routing_key, routingKey));
    else {
      matched = bindings;
      out.notEvaluated.push(`${ex.name} (${ex.type})`);
    }
    for (const b of matched) {
      if (b.destination_type === 'queue') {
        if (this.queues.has(key(vhost, b.destination))) out.queues.add(key(vhost, b.destination));
      } else {
        const sub = this.route(vhost, b.destination, routingKey, seen);
        sub.queues.forEach((q) => out.queues.add(q));
        out.missing.push(...sub.missing);
        out.notEvaluated.push(...sub.notEvaluated);
      }
    }
    if (out.queues.size === 0) {
      const ae = str(ex.arguments?.['alternate-exchange']) ?? str(matchingPolicies(this.snapshot.policies, vhost, exchange, 'exchange')[0]?.definition['alternate-exchange']);
      if (ae !== undefined) {
        const sub = this.route(vhost, ae, routingKey, seen);
        sub.queues.forEach((q) => out.queues.add(q));
        out.missing.push(...sub.missing);
        out.notEvaluated.push(...sub.notEvaluated);
      }
    }
    return out;
  }

  /**
   * The routing keys messages arrive at a queue with, as far as the bindings tell: the queue's
   * name (the default exchange), direct binding keys and wildcard-free topic keys. A binding
   * from a fanout, headers or wildcard topic exchange means keys that cannot be known.
   */
  arrivalKeys(eq: EffectiveQueue): { keys: string[]; unknown: boolean } {
    const keys = new Set<string>([eq.queue.name]);
    let unknown = false;
    for (const b of this.byDestination.get(eq.key) ?? []) {
      if (b.source === '') continue;
      const type = this.exchanges.get(key(b.vhost, b.source))?.type;
      if (type === 'direct' || (type === 'topic' && !/[*#]/.test(b.routing_key))) keys.add(b.routing_key);
      else unknown = true;
    }
    return { keys: [...keys], unknown };
  }

  /** Where a queue's dead letters go: its DLX with x-dead-letter-routing-key, or else with each original key. */
  deadLetterRoute(eq: EffectiveQueue): Route & { keys: string[]; unknownKey: boolean } {
    const out = { queues: new Set<string>(), missing: [] as string[], notEvaluated: [] as string[], keys: [] as string[], unknownKey: false };
    if (eq.dlx === undefined) return out;
    const { keys, unknown } = eq.dlRoutingKey !== undefined ? { keys: [eq.dlRoutingKey], unknown: false } : this.arrivalKeys(eq);
    out.keys = keys;
    out.unknownKey = unknown;
    for (const k of keys) {
      const r = this.route(eq.queue.vhost, eq.dlx, k);
      r.queues.forEach((q) => out.queues.add(q));
      for (const m of r.missing) if (!out.missing.includes(m)) out.missing.push(m);
      for (const n of r.notEvaluated) if (!out.notEvaluated.includes(n)) out.notEvaluated.push(n);
    }
    return out;
  }

  /**
   * A queue's role, from the structure: a DLQ receives dead letters and has no DLX of its own
   * (or, not yet fed, is named like one); a retry queue has a TTL and a DLX and either receives
   * dead letters or is named like one; the rest are work queues.
   */
  role(eq: EffectiveQueue): 'dlq' | 'retry' | 'work' {
    const named = (re: RegExp): boolean => re.test(eq.queue.name);
    if (eq.dlx === undefined && (this.deadLetterTargets.has(eq.key) || named(/(^|[._-])(dlq|dead[._-]?letters?)([._-]|$)/i))) return 'dlq';
    if (eq.dlx !== undefined && eq.messageTtlMs !== undefined && (this.deadLetterTargets.has(eq.key) || named(/retry|delay/i))) return 'retry';
    return 'work';
  }

  /** Strongly connected parts of the dead-letter graph that loop (Tarjan). */
  deadLetterCycles(): string[][] {
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const out: string[][] = [];
    let i = 0;
    const visit = (v: string): void => {
      index.set(v, i);
      low.set(v, i);
      i += 1;
      stack.push(v);
      onStack.add(v);
      for (const w of this.deadLetterEdges.get(v)?.queues ?? []) {
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) {
          low.set(v, Math.min(low.get(v)!, index.get(w)!));
        }
      }
      if (low.get(v) === index.get(v)) {
        const part: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          part.push(w);
        } while (w !== v);
        const selfLoop = part.length === 1 && (this.deadLetterEdges.get(v)?.queues.has(v) ?? false);
        if (part.length > 1 || selfLoop) out.push(part);
      }
    };
    for (const v of [...this.deadLetterEdges.keys()].sort()) if (!index.has(v)) visit(v);
    return out;
  }

  /** One path round a cycle, starting at its alphabetically first work queue: [a, b, a]. */
  cyclePath(part: readonly string[]): string[] {
    const inPart = new Set(part);
    const sorted = [...part].sort((a, b) => {
      const ra = this.role(this.queues.get(a)!) === 'work' ? 0 : 1;
      const rb = this.role(this.queues.get(b)!) === 'work' ? 0 : 1;
      return ra - rb || a.localeCompare(b);
    });
    const start = sorted[0]!;
    const path: string[] = [start];
    const seen = new Set<string>([start]);
    let cur = start;
    for (;;) {
      const next = [...(this.deadLetterEdges.get(cur)?.queues ?? [])].filter((q) => inPart.has(q)).sort();
      const back = next.find((q) => q === start);
      const fresh = next.find((q) => !seen.has(q));
      if (fresh === undefined || (back !== undefined && path.length > 1)) {
        path.push(start);
        return path;
      }
      path.push(fresh);
      seen.add(fresh);
      cur = fresh;
    }
  }

  nameOf(queueKey: string): string {
    return this.queues.get(queueKey)?.queue.name ?? queueKey.split('\u0000')[1] ?? queueKey;
  }
}

// ---------------------------------------------------------------------------------------
// The checks. Pure.

export const CHECK_IDS = [
  'queue-durable',
  'queue-type',
  'mirroring-policy',
  'exchange-durable',
  'dlx-configured',
  'dlx-route',
  'delivery-limit',
  'policy-shadowed',
  'retry-loop',
  'cluster-size',
  'node-running',
  'partitions',
  'alarms',
  'quorum-members',
  'dlq-messages',
  'unacked',
  'no-consumers',
] as const;
export type CheckId = (typeof CHECK_IDS)[number];

export type AuditStatus = 'pass' | 'warn' | 'fail';

export interface AuditItem {
  id: CheckId;
  status: AuditStatus;
  /** What it concerns: `queue demo.orders`, `exchange demo.dlx`, `node rabbit@rabbit1`... */
  object: string;
  message: string;
  /** How to fix it; null when it passes. */
  fix: string | null;
}

export interface AuditOptions {
  /** A queue with this many unacked messages or more is flagged. */
  maxUnacked: number;
}

const pass = (id: CheckId, object: string, message: string): AuditItem => ({ id, status: 'pass', object, message, fix: null });
const warn = (id: CheckId, object: string, message: string, fix: string): AuditItem => ({ id, status: 'warn', object, message, fix });
const fail = (id: CheckId, object: string, message: string, fix: string): AuditItem => ({ id, status: 'fail', object, message, fix });

const HA_KEY = /^ha-/;
const builtInExchange = (name: string): boolean => name === '' || name.startsWith('amq.');
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

function checkQueues(t: Topology, o: AuditOptions): AuditItem[] {
  const items: AuditItem[] = [];
  for (const eq of t.queues.values()) {
    const q = eq.queue;
    if (q.exclusive) continue; // lives and dies with its connection, by design
    const obj = objectName('queue', q.vhost, q.name);
    const role = t.role(eq);

    items.push(
      q.durable === false
        ? fail('queue-durable', obj, 'transient: it and its messages are gone when its node restarts', 'declare it durable (durability cannot be changed: create a durable queue, move the consumers, delete this one)')
        : pass('queue-durable', obj, 'durable'),
    );

    if (eq.type === 'classic') {
      items.push(
        warn(
          'queue-type',
          obj,
          'classic queue: one copy, on one node; its messages are unavailable while that node is down and lost with its disk',
          "where the data matters, declare it as a quorum queue (x-queue-type: quorum; the vhost's default_queue_type can make that the default)",
        ),
      );
    } else {
      items.push(pass('queue-type', obj, `${eq.type} queue`));
    }

    if (eq.type === 'stream') continue; // no dead-lettering, no delivery limit

    if (role === 'work') {
      items.push(
        eq.dlx === undefined
          ? warn(
              'dlx-configured',
              obj,
              `no dead-letter exchange: a message rejected without requeue, expired${eq.deliveryLimit?.limit != null ? `, or past its delivery limit (${eq.deliveryLimit.limit})` : ''} is dropped`,
              'set dead-letter-exchange in a policy matching the queue (or x-dead-letter-exchange) and bind a DLQ to that exchange',
            )
          : pass('dlx-configured', obj, `dead-letter exchange '${eq.dlx}' (${eq.dlxFrom === 'policy' ? `policy ${eq.policy?.name ?? '?'}` : 'queue argument'})`),
      );
    }

    if (eq.dlx !== undefined) items.push(dlxRouteItem(t, eq, obj));

    if (eq.deliveryLimit) {
      const { limit, source } = eq.deliveryLimit;
      items.push(
        limit === null
          ? fail(
              'delivery-limit',
              obj,
              `delivery limit unlimited (${source === 'not set' ? 'not set: unlimited before RabbitMQ 4.0' : `-1 from the ${source}`}): a message that crashes its consumer is redelivered forever and blocks the ones behind it`,
              'set delivery-limit in a policy (or x-delivery-limit), e.g. 5, together with a dead-letter exchange that reaches a DLQ',
            )
          : pass('delivery-limit', obj, `delivery limit ${limit} (${source === 'broker default' ? 'the broker default: not set on the queue' : source})`),
      );
    }

    if (eq.shadowed.length > 0 && eq.policy) items.push(shadowItem(eq, obj));

    if (eq.type === 'quorum') {
      const item = membersItem(q, obj);
      if (item) items.push(item);
    }

    if (role === 'dlq') {
      const n = q.messages ?? 0;
      items.push(
        n > 0
          ? warn('dlq-messages', obj, `dead-letter queue holds ${plural(n, 'message')}: each one failed somewhere`, `look at them (rmq-bench dlq inspect --queue ${q.name}), fix the cause, then replay them (rmq-bench dlq replay --queue ${q.name}) or purge them`)
          : pass('dlq-messages', obj, 'dead-letter queue is empty'),
      );
    }

    const unacked = q.messages_unacknowledged ?? 0;
    items.push(
      unacked >= o.maxUnacked
        ? warn('unacked', obj, `${unacked} unacked messages (limit ${o.maxUnacked}): delivered but not yet acked; they are redelivered when their consumer's channel closes`, 'check the consumers: ack each message once processed, and set a prefetch (basic.qos) so that none holds thousands')
        : pass('unacked', obj, `${unacked} unacked`),
    );

    if (role === 'work') {
      const consumers = q.consumers ?? 0;
      const ready = q.messages_ready ?? 0;
      items.push(
        consumers === 0 && ready > 0
          ? warn('no-consumers', obj, `${plural(ready, 'message')} ready and no consumer`, 'start a consumer for this queue, or remove the queue if nothing reads it any more')
          : pass('no-consumers', obj, consumers > 0 ? plural(consumers, 'consumer') : 'no consumer, and nothing waiting'),
      );
    }
  }
  return items;
}

function dlxRouteItem(t: Topology, eq: EffectiveQueue, obj: string): AuditItem {
  const route = t.deadLetterEdges.get(eq.key) ?? t.deadLetterRoute(eq);
  const dlx = eq.dlx === '' ? "the default exchange ''" : `'${eq.dlx}'`;
  const keyText = eq.dlRoutingKey !== undefined ? `routing key '${eq.dlRoutingKey}'` : `the original routing keys (${route.keys.map((k) => `'${k}'`).join(', ')}${route.unknownKey ? ' and others the bindings do not tell' : ''})`;
  if (route.queues.size > 0) {
    const names = [...route.queues].map((k) => t.nameOf(k)).sort();
    const guess = route.notEvaluated.length > 0 ? `; ${route.notEvaluated.join(', ')} not evaluated: all its bindings counted` : '';
    return pass('dlx-route', obj, `dead letters reach ${names.join(', ')} through ${dlx} with ${keyText}${guess}`);
  }
  if (route.missing.length > 0) {
    return fail('dlx-route', obj, `dead-letter exchange ${route.missing.map((m) => `'${m}'`).join(', ')} does not exist: dead letters are dropped`, `declare exchange '${route.missing[0]}' (durable) and bind a DLQ to it, or point the queue at an existing exchange`);
  }
  if (route.unknownKey) {
    return warn('dlx-route', obj, `dead letters go through ${dlx} with ${keyText}: none of the known keys reaches a queue`, `set a dead-letter-routing-key that ${dlx} routes to a DLQ, or make ${dlx} a fanout exchange with a DLQ bound`);
  }
  return fail(
    'dlx-route',
    obj,
    `dead letters go through ${dlx} with ${keyText}, and no queue is bound for them: they are dropped`,
    eq.dlx === '' ? `set x-dead-letter-routing-key to the name of an existing DLQ` : `bind a DLQ to ${dlx}${eq.dlRoutingKey !== undefined ? ` with key '${eq.dlRoutingKey}'` : ''}`,
  );
}

function shadowItem(eq: EffectiveQueue, obj: string): AuditItem {
  const winner = eq.policy!;
  const lost = eq.shadowed
    .map((p) => ({ p, keys: Object.keys(p.definition).filter((k) => !(k in winner.definition)) }))
    .filter((x) => x.keys.length > 0);
  const by = `policy ${winner.name} (priority ${winner.priority ?? 0})`;
  if (lost.length === 0) {
    return pass('policy-shadowed', obj, `${by} applies and repeats the keys of ${eq.shadowed.map((p) => p.name).join(', ')}`);
  }
  const what = lost.map((x) => `${x.p.name} (priority ${x.p.priority ?? 0}) loses ${x.keys.join(', ')}`).join('; ');
  const repeat = lost.flatMap((x) => x.keys.map((k) => `${k}=${JSON.stringify(x.p.definition[k])}`));
  return fail(
    'policy-shadowed',
    obj,
    `only one policy applies to a queue: ${by} wins, so ${what}`,
    `repeat ${repeat.join(', ')} in policy ${winner.name}, or narrow its pattern so that it does not match this queue`,
  );
}

function membersItem(q: QueueInfo, obj: string): AuditItem | undefined {
  const members = q.members ?? [];
  const online = q.online ?? [];
  if (members.length === 0) return undefined; // not reported yet (a queue declared a moment ago)
  const majority = Math.floor(members.length / 2) + 1;
  const leader = q.leader && q.leader !== '' && q.leader !== 'undefined' ? q.leader : undefined;
  const state = `${online.length}/${members.length} members online`;
  if (!leader || online.length < majority) {
    return fail('quorum-members', obj, `${state}${leader ? '' : ', no leader'}: the queue is unavailable (no majority)`, 'bring the members’ nodes back (rmq-bench cluster status shows which are down)');
  }
  if (online.length < members.length) {
    const off = members.filter((m) => !online.includes(m));
    return warn('quorum-members', obj, `${state} (${off.join(', ')} offline): one more failure and it stops`, 'bring the offline members’ nodes back; if a node is gone for good, rabbitmq-queues delete_member and add_member');
  }
  if (members.length < 3) {
    return warn('quorum-members', obj, `only ${plural(members.length, 'member')}: it survives no node failure`, 'grow it to 3 members: rabbitmq-queues grow <node> all, or declare it with x-quorum-initial-group-size 3');
  }
  return pass('quorum-members', obj, `${state}, leader ${leader}`);
}

function checkExchanges(t: Topology): AuditItem[] {
  return t.snapshot.exchanges
    .filter((e) => !builtInExchange(e.name))
    .map((e) => {
      const obj = objectName('exchange', e.vhost, e.name);
      return e.durable === false
        ? fail('exchange-durable', obj, 'transient: it and its bindings are gone when the node restarts; publishes to it then fail or, through other exchanges, go nowhere', 'declare it durable (delete and redeclare it, then its bindings)')
        : pass('exchange-durable', obj, `durable ${e.type} exchange`);
    });
}

function checkPolicies(t: Topology): AuditItem[] {
  const items: AuditItem[] = [];
  const policies = t.snapshot.policies;
  for (const p of policies) {
    const ha = Object.keys(p.definition).filter((k) => HA_KEY.test(k));
    if (ha.length > 0) {
      items.push(
        fail(
          'mirroring-policy',
          objectName('policy', p.vhost, p.name),
          `classic queue mirroring (${ha.join(', ')}): deprecated in 3.x and removed in RabbitMQ 4.0, where these keys do nothing; the queues it matches are not replicated`,
          'move the queues to quorum queues, then delete the ha-* keys (or the policy)',
        ),
      );
    }
  }
  if (items.length === 0) items.push(pass('mirroring-policy', 'policies', `no classic mirroring (ha-*) key in ${plural(policies.length, 'policy', 'policies')}`));
  if (![...t.queues.values()].some((eq) => eq.shadowed.length > 0 && !eq.queue.exclusive && eq.type !== 'stream')) {
    items.push(pass('policy-shadowed', 'policies', 'no queue is matched by more than one policy'));
  }
  return items;
}

function checkRetryLoops(t: Topology): AuditItem[] {
  const cycles = t.deadLetterCycles();
  if (cycles.length === 0) return [pass('retry-loop', 'dead-letter graph', 'no dead-letter cycle')];
  return cycles.map((part) => {
    const members = new Set(part);
    const path = t.cyclePath(part);
    const exits = new Set<string>();
    for (const m of part) for (const q of t.deadLetterEdges.get(m)?.queues ?? []) if (!members.has(q)) exits.add(q);
    const first = t.queues.get(path[0]!)!;
    const obj = objectName('queues', first.queue.vhost, path.map((k) => t.nameOf(k)).join(' → '));
    const ttl = part
      .map((k) => t.queues.get(k)!)
      .filter((eq) => eq.messageTtlMs !== undefined)
      .map((eq) => `${eq.queue.name} holds them ${eq.messageTtlMs} ms`);
    const loop = `dead letters go round ${path.map((k) => t.nameOf(k)).join(' → ')}${ttl.length > 0 ? ` (${ttl.join(', ')})` : ''}`;
    const fix =
      'give the loop an exit: the consumer counts attempts (x-death count) and, past N, publishes the message to a DLQ and acks it; or use RabbitMQ 4.3 delayed retry (x-delayed-retry-*) with a delivery-limit and a DLX that reaches a DLQ instead of a TTL queue';
    const unrejected = 'one dead-lettered without a rejection (delivery limit, TTL, max-length) is dropped when it comes round again (RabbitMQ’s dead-letter cycle detection)';
    if (exits.size === 0) {
      return fail(
        'retry-loop',
        obj,
        `${loop}, and no other queue receives them. A message rejected on every attempt cycles forever; ${unrejected} and is lost: there is no copy anywhere`,
        `${fix}; until then, bind a DLQ to ${first.dlx === '' ? 'the dead-letter exchange' : `'${first.dlx}'`} so that a copy of each dead letter is kept`,
      );
    }
    const exitNames = [...exits].map((k) => t.nameOf(k)).sort().join(', ');
    return warn(
      'retry-loop',
      obj,
      `${loop}. A copy of each dead letter also reaches ${exitNames}, so none is lost, but nothing ends the loop: a message rejected on every attempt cycles forever (one more copy in ${exitNames} each round); ${unrejected}, its copy in ${exitNames} remains`,
      fix,
    );
  });
}

function checkNodes(s: BrokerSnapshot): AuditItem[] {
  const items: AuditItem[] = [];
  const cluster = `cluster ${s.overview.cluster_name ?? s.overview.node ?? ''}`.trim();
  const running = s.nodes.filter((n) => n.running).length;
  items.push(
    s.nodes.length >= 3
      ? pass('cluster-size', cluster, `${s.nodes.length} nodes`)
      : fail('cluster-size', cluster, `${plural(s.nodes.length, 'node')}: quorum queues need 3 to keep working when one node fails`, 'run at least 3 nodes (an odd number)'),
  );
  for (const n of s.nodes) {
    const obj = `node ${n.name}`;
    items.push(n.running ? pass('node-running', obj, 'running') : fail('node-running', obj, `not running (${running} of ${s.nodes.length} are)`, `start ${n.name} again; until then its quorum-queue members are offline`));
    const partitions = n.partitions ?? [];
    items.push(
      partitions.length > 0
        ? fail('partitions', obj, `partitioned from ${partitions.join(', ')}`, 'heal the network between the nodes; restart the nodes of the minority side')
        : pass('partitions', obj, 'no partition'),
    );
    const alarms = [n.mem_alarm ? 'memory' : undefined, n.disk_free_alarm ? 'disk' : undefined].filter((a): a is string => a !== undefined);
    items.push(
      alarms.length > 0
        ? fail('alarms', obj, `${alarms.join(' and ')} alarm: publishers on every node are blocked until it clears`, alarms.includes('disk') ? 'free disk space (or consume the backlog); check disk_free_limit' : 'consume the backlog or add memory; check vm_memory_high_watermark')
        : pass('alarms', obj, 'no memory or disk alarm'),
    );
  }
  return items;
}

const ORDER: Record<AuditStatus, number> = { fail: 0, warn: 1, pass: 2 };

/** The checklist over one snapshot. Pure. */
export function auditChecks(snapshot: BrokerSnapshot, options: AuditOptions): AuditItem[] {
  const t = new Topology(snapshot);
  const items = [...checkNodes(snapshot), ...checkQueues(t, options), ...checkExchanges(t), ...checkPolicies(t), ...checkRetryLoops(t)];
  return items.sort((a, b) => ORDER[a.status] - ORDER[b.status] || CHECK_IDS.indexOf(a.id) - CHECK_IDS.indexOf(b.id) || a.object.localeCompare(b.object));
}

export interface AuditResult {
  ok: boolean;
  counts: Record<AuditStatus, number>;
  cluster: { name: string | undefined; version: string | undefined; node: string | undefined };
  answeredBy: Endpoint;
  unanswered: Unanswered[];
  objects: { nodes: number; queues: number; exchanges: number; bindings: number; policies: number };
  items: AuditItem[];
}

export function auditResultOf(snapshot: BrokerSnapshot, read: { answeredBy: Endpoint; unanswered: Unanswered[] }, options: AuditOptions): AuditResult {
  const items = auditChecks(snapshot, options);
  const counts = { pass: 0, warn: 0, fail: 0 };
  for (const i of items) counts[i.status] += 1;
  return {
    ok: counts.fail === 0,
    counts,
    cluster: { name: snapshot.overview.cluster_name, version: snapshot.overview.rabbitmq_version ?? snapshot.overview.product_version, node: snapshot.overview.node },
    answeredBy: read.answeredBy,
    unanswered: read.unanswered,
    objects: {
      nodes: snapshot.nodes.length,
      queues: snapshot.queues.length,
      exchanges: snapshot.exchanges.length,
      bindings: snapshot.bindings.length,
      policies: snapshot.policies.length,
    },
    items,
  };
}

export async function runAudit(ctx: Context, options: AuditOptions): Promise<AuditResult> {
  const read = await readBroker(new SnapshotReader(ctx.management));
  return auditResultOf(read.snapshot, read, options);
}
