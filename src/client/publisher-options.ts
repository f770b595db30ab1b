import type { TimelineEvent } from './publish-loop.js';
import type { PublishMode } from './publish-rules.js';

/** What runPublisher is asked to do (options) and how a caller follows and steers it (hooks). */

export interface PublisherOptions {
  urls: readonly string[];
  /** The same nodes' native stream protocol URLs (rabbitmq-stream://), index for index: the stream protocol's producer connects to these. */
  streamUrls?: readonly string[] | undefined;
  /** Index in urls to connect to first (compare: the queue leader's node). */
  startIndex: number;
  exchange: string;
  routingKey: string;
  count: number;
  /** Messages per second; 0 = as fast as possible. */
  ratePerSec: number;
  sizeBytes: number;
  persistent: boolean;
  mandatory: boolean;
  mode: PublishMode;
  /** async: outstanding confirms at most. */
  window: number;
  /** batch: confirms awaited every N; tx: commit every N. */
  batchSize: number;
  confirmTimeoutMs: number;
  heartbeatS: number;
  /** Deadline to get a connection back after losing one. */
  reconnectTimeoutMs: number;
  runId: string;
  /** At the end: how long to wait for the client library to hand buffered publishes to the broker. */
  flushTimeoutMs?: number;
  /** How long the connection may stay blocked by the broker (a resource alarm) before the run gives up (default 60 s). */
  blockedTimeoutMs?: number;
  /**
   * Also carry x-rmq-bench-published-at-us: microseconds, performance.timeOrigin + performance.now(),
   * so that a consumer in the same process can measure end-to-end latency finer than Date.now()'s ms.
   */
  publishedAtUs?: boolean;
  /**
   * Only message_id, delivery mode and (with publishedAtUs) the publish time: no content type, no
   * timestamp, no x-rmq-bench-run/-seq/-published-at headers. For throughput runs, where encoding
   * them costs measurable CPU per message; `verify` needs only the message_id.
   */
  leanProperties?: boolean;
  /**
   * Record confirm latencies in the result's confirmLatency histograms (default true). false: the
   * caller records them itself from hooks.onConfirm (bench's meter), and the result's histograms
   * stay empty; one histogram record per confirm instead of two.
   */
  recordConfirmLatency?: boolean;
  /**
   * Sample the progress (written, confirmed, in flight) every 10 ms for the charts (the result's
   * samples); false: only the first and last sample (bench has its own meter, a sample a second,
   * and a timer firing a hundred times a second costs CPU the figures would count). Default true.
   */
  sampleProgress?: boolean;
  /**
   * First sequence to publish (default 0): sequences startSeq..count-1. A restarted producer that
   * resumes from the last number it printed (producer-crash's naive mode).
   */
  startSeq?: number;
}

export interface PublisherSnapshot {
  written: number;
  confirmed: number;
  inFlight: number;
  reconnects: number;
  retryBacklog: number;
}

export interface PublisherHooks {
  signal: AbortSignal;
  /** After a message is written for the first time, with the number of distinct messages written so far, and when (the publisher's clock, performance.now()). */
  onWritten?: (distinctWritten: number, atMs: number) => void;
  onEvent?: (event: TimelineEvent) => void;
  /** Whether a confirm arriving now falls in the window around a fault (for a second histogram). */
  inFaultWindow?: () => boolean;
  /**
   * On each broker ack (tx: each message of a committed batch), with its latency in ms: publish to
   * ack (tx: the commit round trip); undefined for a late ack whose publish time was dropped. atMs:
   * when it arrived (the publisher's clock): a hook needs no clock reading of its own.
   */
  onConfirm?: (latencyMs: number | undefined, atMs: number) => void;
  /** On each refusal by the broker (0-9-1 nack; AMQP 1.0 rejected or modified): the timeline has one event per reason, not per refusal. */
  onRefused?: () => void;
  /**
   * Stop publishing new messages, as if `count` had been reached: retries and outstanding confirms
   * are still awaited (tx: the open transaction is committed) and the run can end completed. For
   * runs bounded by time rather than by count.
   */
  stop?: AbortSignal;
  /**
   * Publishing has ended (every message settled, or the run gave up or was interrupted), before the
   * channel or link is closed: where a meter's per-message work ends.
   */
  onPublishingEnded?: () => void;
  /** Called once at the start with a reader of the live counters (chaos's per-second line and timeline). */
  onStart?: (snapshot: () => PublisherSnapshot) => void;
}
