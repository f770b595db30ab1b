import type { FailureAction, FailureAction10 } from './consumer-failures.js';

/** What runConsumer returns: the run's counters, and a record of each delivery. */

/** A failure's action is AMQP 0-9-1's (runConsumer) or AMQP 1.0's (runConsumer10). */
export type DeliveryOutcome = 'processed' | 'duplicate-skipped' | FailureAction | FailureAction10 | 'crash';

export interface DeliveryRecord {
  atMs: number;
  messageId: string | undefined;
  redelivered: boolean;
  /** x-delivery-count as the broker sent it (absent on a first delivery). */
  deliveryCount: number | undefined;
  /** x-acquired-count (RabbitMQ 4.x), when present. */
  acquiredCount: number | undefined;
  /** First x-death entry, e.g. "rejected from demo.orders ×2". */
  death: string | undefined;
  outcome: DeliveryOutcome;
}

export interface ConsumerResult {
  queue: string;
  autoAck: boolean;
  prefetch: number;
  received: number;
  processed: number;
  duplicatesSkipped: number;
  acked: number;
  nacked: number;
  rejected: number;
  /** Connections closed on purpose (--nack, --on-failure close). */
  crashes: number;
  byOutcome: Record<string, number>;
  reconnects: number;
  /**
   * basic.cancel from the broker: a consumer timeout (RabbitMQ 4.3 quorum queues), or the queue
   * deleted. Each time the connection is closed (the broker's consumer with it) and the
   * consumer subscribes again; a deleted queue then ends the run.
   */
  cancels: number;
  /** Channels the broker closed under the consumer while its connection stayed (a consumer timeout before 4.3); each followed by a new subscription. */
  channelsClosed: number;
  /** The most deliveries held at once by this consumer, unacked or (autoack) unprocessed. */
  maxHeld: number;
  /** ms since start of the last message processed. */
  lastProcessedAtMs: number | null;
  durationMs: number;
  stoppedBecause: 'count' | 'idle' | 'interrupted' | 'gave-up';
  gaveUp: string | null;
  /** Every delivery, in order (at most the first 100,000). */
  deliveries: DeliveryRecord[];
}
