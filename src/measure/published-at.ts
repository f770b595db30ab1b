import type { MessageProperties } from 'amqplib';

/**
 * The publish time a message carries for end-to-end latency: header x-rmq-bench-published-at-us,
 * µs since the epoch on this process's performance clock (performance.timeOrigin +
 * performance.now()), finer than Date.now()'s ms. Only a consumer in the same process can
 * compare it with its own clock. Encode and decode side by side; pure but for the default clock.
 */

export const PUBLISHED_AT_US_HEADER = 'x-rmq-bench-published-at-us';

const TIME_ORIGIN_MS = performance.timeOrigin;

/** performance.now() (ms since the process's time origin) → the header's value: whole µs since the epoch. */
export function encodePublishedAtUs(perfNowMs: number = performance.now()): number {
  return Math.round((TIME_ORIGIN_MS + perfNowMs) * 1000);
}

/** The header's value, in µs since the epoch; undefined when absent or not a number (AMQP longs may come back as bigint). */
export function decodePublishedAtUs(headers: MessageProperties['headers'] | undefined): number | undefined {
  const v = (headers as Record<string, unknown> | undefined)?.[PUBLISHED_AT_US_HEADER];
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined;
}

/** Now, on the publisher's clock (µs since the epoch, performance-based), not rounded. */
export function nowUs(perfNowMs: number = performance.now()): number {
  return (TIME_ORIGIN_MS + perfNowMs) * 1000;
}

/** Publish-to-delivery latency in ms, from the header the publisher set; undefined without it. */
export function endToEndMs(msg: { properties: Pick<MessageProperties, 'headers'> }, nowMicros: number = nowUs()): number | undefined {
  const us = decodePublishedAtUs(msg.properties.headers);
  return us === undefined ? undefined : (nowMicros - us) / 1000;
}
