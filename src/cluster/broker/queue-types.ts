/**
 * The kinds of queue a leader fault can be run against (`--queue-type` on compare, failover and
 * chaos). No imports but types: the CLI declares its options with it.
 *
 *   quorum    a quorum queue (Raft): the leader and its followers; a new leader is elected.
 *   mirrored  a classic queue with an `ha-mode: all` policy (RabbitMQ before 4.0): the master
 *             and its mirrors; a mirror is promoted when the master goes.
 *   classic   a classic queue without mirrors: it lives on one node; nothing takes over, the
 *             queue is unavailable until its node is back.
 *   stream    a stream (an append-only log replicated by osiris): a writer (the leader) and its
 *             replicas; a replica takes over as writer. Read by offset, never consumed: compare
 *             declares it afresh for each run and reads it from its first message.
 */
export const QUEUE_TYPES = ['quorum', 'mirrored', 'classic', 'stream'] as const;
export type QueueType = (typeof QUEUE_TYPES)[number];

/** The commands that fault a queue's leader, each with --queue-type. */
export type QueueTypeCommand = 'compare' | 'failover' | 'chaos';

interface QueueTypeTraits {
  /** The queue's x-queue-type as the broker declares and reports it. */
  readonly broker: 'quorum' | 'classic' | 'stream';
  /** A fault on the leader is followed by an election (a promotion, a new writer). */
  readonly electsLeader: boolean;
  /** Read by offset from its first message, never consumed nor purged (a stream). */
  readonly readByOffset: boolean;
  /** The commands it does not run under (left out of their --queue-type choices), each with why. */
  readonly refusedBy: Partial<Record<QueueTypeCommand, string>>;
}

/** Each queue type's traits: a new type is added here, and the compiler asks for each. */
export const QUEUE_TYPE_TRAITS = {
  quorum: { broker: 'quorum', electsLeader: true, readByOffset: false, refusedBy: {} },
  mirrored: { broker: 'classic', electsLeader: true, readByOffset: false, refusedBy: {} },
  classic: { broker: 'classic', electsLeader: false, readByOffset: false, refusedBy: {} },
  stream: {
    broker: 'stream',
    electsLeader: true,
    readByOffset: true,
    refusedBy: { chaos: "chaos's consumers take and ack their queues' messages; a stream is read by offset, never consumed" },
  },
} as const satisfies Record<QueueType, QueueTypeTraits>;

/** The queue's x-queue-type as the broker declares and reports it. */
export const BROKER_QUEUE_TYPE: Record<QueueType, QueueTypeTraits['broker']> = {
  quorum: QUEUE_TYPE_TRAITS.quorum.broker,
  mirrored: QUEUE_TYPE_TRAITS.mirrored.broker,
  classic: QUEUE_TYPE_TRAITS.classic.broker,
  stream: QUEUE_TYPE_TRAITS.stream.broker,
};

/** Whether a fault on the queue's leader is followed by an election (a promotion) on this queue type. */
export const ELECTS_A_LEADER: Record<QueueType, boolean> = {
  quorum: QUEUE_TYPE_TRAITS.quorum.electsLeader,
  mirrored: QUEUE_TYPE_TRAITS.mirrored.electsLeader,
  classic: QUEUE_TYPE_TRAITS.classic.electsLeader,
  stream: QUEUE_TYPE_TRAITS.stream.electsLeader,
};

/** The queue types `command` runs against: its --queue-type choices. Pure. */
export function queueTypesFor(command: QueueTypeCommand): QueueType[] {
  return QUEUE_TYPES.filter((t) => {
    const refusedBy: Partial<Record<QueueTypeCommand, string>> = QUEUE_TYPE_TRAITS[t].refusedBy;
    return refusedBy[command] === undefined;
  });
}

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
