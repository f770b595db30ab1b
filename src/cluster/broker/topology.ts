import { effectiveAlternateExchange, effectiveQueue, type EffectiveQueue } from './policy.js';
import { objectKey, type BindingInfo, type BrokerSnapshot, type ExchangeInfo } from './snapshot.js';

/**
 * The topology of one snapshot as a graph, for the audit and watch scenarios: where a message
 * published to an exchange goes (bindings, alternate exchanges), where each queue's dead
 * letters go (DLX edges), the queues' roles (work, retry, DLQ) and the dead-letter cycles
 * (retry loops). Pure.
 */

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

interface Route {
  /** Queue keys (vhost\0name) a message reaches. */
  queues: Set<string>;
  /** Exchanges on the way that do not exist. */
  missing: string[];
  /** Exchanges routed on something other than the key (headers, plugins): all their bindings counted. */
  notEvaluated: string[];
}

/** Where a queue's dead letters go, and with which routing keys. */
interface DeadLetterRoute extends Route {
  keys: string[];
  /** Some arrival keys cannot be known (fanout, headers, wildcard topic bindings). */
  unknownKey: boolean;
}

export type QueueRole = 'dlq' | 'retry' | 'work';

export class Topology {
  readonly queues = new Map<string, EffectiveQueue>();
  readonly exchanges = new Map<string, ExchangeInfo>();
  private readonly bySource = new Map<string, BindingInfo[]>();
  private readonly byDestination = new Map<string, BindingInfo[]>();
  /** Dead-letter edges: queue key → queue keys its dead letters reach. */
  readonly deadLetterEdges = new Map<string, DeadLetterRoute>();
  /** Queue keys that receive dead letters from some other queue. */
  readonly deadLetterTargets = new Set<string>();

  constructor(readonly snapshot: BrokerSnapshot) {
    for (const e of snapshot.exchanges) this.exchanges.set(objectKey(e.vhost, e.name), e);
    for (const b of snapshot.bindings) {
      const s = objectKey(b.vhost, b.source);
      this.bySource.set(s, [...(this.bySource.get(s) ?? []), b]);
      if (b.destination_type === 'queue') {
        const d = objectKey(b.vhost, b.destination);
        this.byDestination.set(d, [...(this.byDestination.get(d) ?? []), b]);
      }
    }
    for (const q of snapshot.queues) this.queues.set(objectKey(q.vhost, q.name), effectiveQueue(q, snapshot.policies, snapshot.overview));
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
    const k = objectKey(vhost, exchange);
    if (seen.has(k)) return out;
    seen.add(k);
    if (exchange === '') {
      if (routingKey !== undefined && this.queues.has(objectKey(vhost, routingKey))) out.queues.add(objectKey(vhost, routingKey));
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
        if (this.queues.has(objectKey(vhost, b.destination))) out.queues.add(objectKey(vhost, b.destination));
      } else {
        const sub = this.route(vhost, b.destination, routingKey, seen);
        for (const q of sub.queues) out.queues.add(q);
        out.missing.push(...sub.missing);
        out.notEvaluated.push(...sub.notEvaluated);
      }
    }
    if (out.queues.size === 0) {
      const ae = effectiveAlternateExchange(ex, this.snapshot.policies);
      if (ae !== undefined) {
        const sub = this.route(vhost, ae, routingKey, seen);
        for (const q of sub.queues) out.queues.add(q);
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
      const type = this.exchanges.get(objectKey(b.vhost, b.source))?.type;
      if (type === 'direct' || (type === 'topic' && !/[*#]/.test(b.routing_key))) keys.add(b.routing_key);
      else unknown = true;
    }
    return { keys: [...keys], unknown };
  }

  /** Where a queue's dead letters go: its DLX with x-dead-letter-routing-key, or else with each original key. */
  deadLetterRoute(eq: EffectiveQueue): DeadLetterRoute {
    const out = { queues: new Set<string>(), missing: [] as string[], notEvaluated: [] as string[], keys: [] as string[], unknownKey: false };
    if (eq.dlx === undefined) return out;
    const { keys, unknown } = eq.dlRoutingKey !== undefined ? { keys: [eq.dlRoutingKey], unknown: false } : this.arrivalKeys(eq);
    out.keys = keys;
    out.unknownKey = unknown;
    for (const k of keys) {
      const r = this.route(eq.queue.vhost, eq.dlx, k);
      for (const q of r.queues) out.queues.add(q);
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
  role(eq: EffectiveQueue): QueueRole {
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
