import { objectKey, type ExchangeInfo, type OverviewInfo, type PolicyInfo, type QueueInfo } from './snapshot.js';

/**
 * Which policy applies to a queue or exchange, and the settings that result. Pure.
 *
 * Effective settings are worked out the way RabbitMQ does: only the highest-priority policy
 * that matches a queue applies (its keys replace, never merge with, a lower one's); queue
 * arguments win over the policy for dead-letter-exchange and dead-letter-routing-key, the
 * smaller value wins for message-ttl and delivery-limit (a negative delivery-limit is
 * "unlimited" and yields to the other). The policies are matched here rather than read from
 * the queue's `effective_policy_definition`, because the management API refreshes that only
 * with its statistics (every 5 s): a policy set a moment ago is already in /api/policies.
 */

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
/** A finite number, or undefined. Pure. */
export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
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
function matchingPolicies(policies: readonly PolicyInfo[], vhost: string, name: string, target: 'queue' | 'exchange', queueType?: string): PolicyInfo[] {
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
  /** Quorum queues: the consumer timeout the queue sets (a consumer argument still overrides it). */
  consumerTimeout: ConsumerTimeout | undefined;
  /** Quorum queues: x-dead-letter-strategy (argument first, then policy; at-most-once when neither) and x-overflow (drop-head when neither). */
  deadLetterStrategy: string | undefined;
  overflow: string | undefined;
}

/**
 * RabbitMQ 4.3 (rabbitmq-server consumer_timeouts.md): the smaller of the queue argument
 * x-consumer-timeout and the policy key consumer-timeout; neither set: the broker's
 * consumer_timeout (rabbitmq.conf, 30 minutes by default), which the management API does not show.
 */
interface ConsumerTimeout {
  ms: number | null;
  source: 'argument' | 'policy' | 'argument and policy' | 'broker setting';
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
      deliveryLimit = {
        limit: explicit < 0 ? null : explicit,
        source: a !== undefined && p !== undefined ? 'argument and policy' : a !== undefined ? 'argument' : 'policy',
      };
    } else if (q.delivery_limit !== undefined) {
      const reported = q.delivery_limit;
      deliveryLimit = { limit: typeof reported === 'number' && reported >= 0 ? reported : null, source: 'broker default' };
    } else {
      // 4.0 made 20 the default; before it, unset meant unlimited.
      const major = majorVersion(overview);
      deliveryLimit = major !== undefined && major >= 4 ? { limit: 20, source: 'broker default' } : { limit: null, source: 'not set' };
    }
  }
  let consumerTimeout: ConsumerTimeout | undefined;
  if (type === 'quorum') {
    const a = num(args['x-consumer-timeout']);
    const p = num(def['consumer-timeout']);
    consumerTimeout =
      a === undefined && p === undefined
        ? { ms: null, source: 'broker setting' }
        : { ms: minDefined(a, p)!, source: a !== undefined && p !== undefined ? 'argument and policy' : a !== undefined ? 'argument' : 'policy' };
  }
  return {
    queue: q,
    key: objectKey(q.vhost, q.name),
    type,
    policy,
    shadowed: matching.filter((p) => p !== policy),
    dlx: argDlx ?? polDlx,
    dlxFrom: argDlx !== undefined ? 'argument' : polDlx !== undefined ? 'policy' : undefined,
    dlRoutingKey: str(args['x-dead-letter-routing-key']) ?? str(def['dead-letter-routing-key']),
    messageTtlMs: minDefined(num(args['x-message-ttl']), num(def['message-ttl'])),
    deliveryLimit,
    consumerTimeout,
    deadLetterStrategy: type === 'quorum' ? (str(args['x-dead-letter-strategy']) ?? str(def['dead-letter-strategy']) ?? 'at-most-once') : undefined,
    overflow: type === 'quorum' ? (str(args['x-overflow']) ?? str(def.overflow) ?? 'drop-head') : undefined,
  };
}

/** An exchange's alternate exchange: its argument, else the highest-priority matching policy's. */
export function effectiveAlternateExchange(ex: ExchangeInfo, policies: readonly PolicyInfo[]): string | undefined {
  return str(ex.arguments?.['alternate-exchange']) ?? str(matchingPolicies(policies, ex.vhost, ex.name, 'exchange')[0]?.definition['alternate-exchange']);
}
