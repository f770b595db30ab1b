import type { ConsumerOptions } from './consumer-options.js';

/**
 * The consumer most scenarios run: manual ack of each delivery, no simulated work or failure, no
 * count to stop at, and no idempotent store. Where to connect, the queue, prefetch and the
 * timeouts differ from one scenario to the next, so a caller always gives them.
 */
const DEFAULTS = Object.freeze({
  autoAck: false,
  crashOnDelivery: false,
  failure: undefined,
  workMs: 0,
  ackEvery: 1,
  count: undefined,
  store: undefined,
} satisfies Partial<ConsumerOptions>);

type Defaulted = keyof typeof DEFAULTS;

/** A consumer's options: the ones without a default, and any default to replace. */
type ConsumerOverrides = Omit<ConsumerOptions, Defaulted> & Partial<Pick<ConsumerOptions, Defaulted>>;

/** DEFAULTS with `overrides` on top. Pure. */
export function consumerOptions(overrides: ConsumerOverrides): ConsumerOptions {
  return { ...DEFAULTS, ...overrides };
}
