/**
 * What bench's lean consumer is asked to do (options) and what its caller holds while it runs,
 * whatever the protocol (amqp091/lean-consumer.ts, amqp10/lean-consumer10.ts).
 */

export interface LeanConsumerOptions {
  urls: readonly string[];
  queue: string;
  /** 0 = unlimited (AMQP 1.0: the link credit, 0 meaning rhea's default window of 100). */
  prefetch: number;
  /** One multiple-ack every N deliveries (1 = ack each); AMQP 0-9-1 only: over AMQP 1.0 each delivery is accepted at once. */
  ackEvery: number;
  heartbeatS: number;
  /** Deadline to get the first connection. */
  connectTimeoutMs: number;
  signal: AbortSignal;
  connectionName?: string;
}

export interface LeanConsumer {
  /** Resolves, with why, if the connection, the channel or the subscription ends before stop(). */
  readonly lost: Promise<string>;
  /** Deliveries handed to onMessage so far. */
  readonly received: number;
  /** Ack what is pending, then close the channel and the connection (AMQP 1.0: the connection). */
  stop(): Promise<void>;
}
