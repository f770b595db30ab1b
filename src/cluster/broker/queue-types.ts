/**
 * The kinds of queue a leader fault can be run against (`--queue-type` on compare, failover and
 * chaos). No imports but types: the CLI declares its options with it.
 *
 *   quorum    a quorum queue (Raft): the leader and its followers; a new leader is elected.
 *   mirrored  a classic queue with an `ha-mode: all` policy (RabbitMQ before 4.0): the master
 *             and its mirrors; a mirror is promoted when the master goes.
 *   classic   a classic queue without mirrors: it lives on one node; nothing takes over, the
 *             queue is unavailable until its node is back.
 *
 * Streams are not among them: a stream has no consumer acks to reconcile the way these are.
 */
export const QUEUE_TYPES = ['quorum', 'mirrored', 'classic'] as const;
export type QueueType = (typeof QUEUE_TYPES)[number];

/** The queue's x-queue-type as the broker declares and reports it. */
export const BROKER_QUEUE_TYPE: Record<QueueType, 'quorum' | 'classic'> = { quorum: 'quorum', mirrored: 'classic', classic: 'classic' };

/** Whether a fault on the queue's leader is followed by an election (a promotion) on this queue type. */
export const ELECTS_A_LEADER: Record<QueueType, boolean> = { quorum: true, mirrored: true, classic: false };

/** The queue a scenario declares for itself when the user names none (deleted again at the end). Pure. */
export function ownQueueName(scenario: string, type: QueueType): string {
  return `rmq-bench.${scenario}.${type}`;
}

/** A policy pattern that matches exactly these names. Pure. */
export function exactPattern(...names: string[]): string {
  return names.map((n) => `^${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`).join('|');
}

/** The policy that mirrors the queues a pattern matches on every node, for the management API (PUT /api/policies/...). Pure. */
export function mirrorPolicy(pattern: string): { pattern: string; 'apply-to': 'queues'; priority: number; definition: Record<string, unknown> } {
  return {
    pattern,
    'apply-to': 'queues',
    // Above every policy of the definitions: one policy applies to a queue, the highest.
    priority: 100,
    definition: { 'ha-mode': 'all', 'ha-sync-mode': 'automatic' },
  };
}
