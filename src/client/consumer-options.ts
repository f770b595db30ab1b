import type { ProcessedStore } from '../store/processed.js';
import type { FailureSpec } from './consumer-failures.js';
import type { DeliveryRecord } from './consumer-result.js';

/** What runConsumer is asked to do (options) and how a caller follows it (hooks). */

export interface ConsumerOptions {
  urls: readonly string[];
  /** Index in urls to connect to first (default 0). */
  startIndex?: number;
  queue: string;
  /** basic.consume arguments (for example x-consumer-timeout). */
  consumeArguments?: Record<string, unknown>;
  /** 0 = unlimited. Ignored by the broker with autoack. */
  prefetch: number;
  autoAck: boolean;
  /** The article's --nack: every delivery "crashes" the consumer (connection closed, no ack). */
  crashOnDelivery: boolean;
  failure: FailureSpec | undefined;
  workMs: number;
  /** The work of one delivery, in ms, when it differs by message (a slow message among fast ones); workMs otherwise. */
  workMsOf?: (messageId: string) => number;
  /** Manual ack: one multiple-ack every N messages (1 = ack each). A wider window for duplicates after a crash. */
  ackEvery: number;
  /** Stop after this many deliveries processed (or skipped as duplicates). */
  count: number | undefined;
  /** Stop when nothing arrived for this long. */
  idleTimeoutMs: number;
  heartbeatS: number;
  reconnectTimeoutMs: number;
  store: ProcessedStore | undefined;
  /**
   * Poll with basic.get instead of subscribing (as rabbitmq/jepsen mixes them in): one get at a
   * time, at most `prefetch` deliveries held (basic.qos does not bound gets), a pause of
   * POLL_EMPTY_MS when the queue is empty. Undefined: subscribe.
   */
  polling?: boolean;
  /** Pseudo-random source for --fail-rate (injectable for tests). */
  random?: () => number;
}

export interface ConsumerHooks {
  signal: AbortSignal;
  onDelivery?: (d: DeliveryRecord) => void;
  onEvent?: (line: string) => void;
  /** After each basic.consume is in place. */
  onSubscribed?: () => void;
  /** The moment the broker's basic.cancel arrives (the consumer subscribes again once its current work is over). */
  onCancelled?: () => void;
  /** The broker closed the consumer's channel, its connection still open (a consumer timeout before 4.3): its reason; the consumer subscribes again. */
  onChannelClosed?: (reason: string) => void;
}
