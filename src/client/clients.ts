import { UsageError } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import { endToEndMs } from '../measure/published-at.js';
import { runConsumer } from './amqp091/consumer.js';
import { runPublisher } from './amqp091/publisher.js';
import { startLeanConsumer } from './amqp091/lean-consumer.js';
import { runConsumer10 } from './amqp10/consumer10.js';
import { runPublisher10 } from './amqp10/publisher10.js';
import { startLeanConsumer10 } from './amqp10/lean-consumer10.js';
import { type FailureSpec, isFailureAction091, isFailureAction10 } from './consumer-failures.js';
import type { ConsumerHooks, ConsumerOptions } from './consumer-options.js';
import type { ConsumerResult } from './consumer-result.js';
import type { LeanConsumer, LeanConsumerOptions } from './lean-consumer-options.js';
import type { PublisherHooks, PublisherOptions } from './publisher-options.js';
import type { PublisherResult } from './publisher-result.js';
import type { AnyProtocol, Protocol } from './protocol.js';
import { runStreamPublisher } from './stream/stream-publisher.js';

/**
 * Each protocol's client: its producer, its consumer and bench's lean consumer, with the same
 * options, hooks and results whatever the protocol. The one place a protocol picks its code
 * (what it can do, for the commands to decide by: PROTOCOL_TRAITS in protocol.ts).
 */

export type RunPublisher = (opts: PublisherOptions, ledger: Ledger, hooks: PublisherHooks) => Promise<PublisherResult>;

/** The consumer's options with --on-failure's action as given; each protocol's consumer takes only its own. */
export type AnyConsumerOptions = Omit<ConsumerOptions, 'failure'> & { failure: FailureSpec<string> | undefined };
export type RunConsumer = (opts: AnyConsumerOptions, hooks: ConsumerHooks) => Promise<ConsumerResult>;

/** Subscribes; onMessage gets each delivery's end-to-end latency (undefined without a published-at header). */
export type StartLeanConsumer = (opts: LeanConsumerOptions, onMessage: (e2eMs: number | undefined) => void) => Promise<LeanConsumer>;

export interface ProtocolClient {
  publisher: RunPublisher;
  consumer: RunConsumer;
  leanConsumer: StartLeanConsumer;
}

const CLIENTS = {
  amqp091: {
    publisher: runPublisher,
    consumer: (o, h) => runConsumer({ ...o, failure: failureOf(o.failure, isFailureAction091) }, h),
    leanConsumer: (o, onMessage) => startLeanConsumer(o, (msg) => onMessage(endToEndMs(msg))),
  },
  amqp10: {
    publisher: runPublisher10,
    consumer: (o, h) => runConsumer10({ ...o, failure: failureOf(o.failure, isFailureAction10) }, h),
    leanConsumer: startLeanConsumer10,
  },
} satisfies { [P in Protocol]: ProtocolClient };

export function clientFor(protocol: Protocol): ProtocolClient {
  return CLIENTS[protocol];
}

/** Each protocol's producer: the AMQP clients' and the native stream protocol's (a producer only). */
const PUBLISHERS = {
  amqp091: CLIENTS.amqp091.publisher,
  amqp10: CLIENTS.amqp10.publisher,
  stream: runStreamPublisher,
} satisfies { [P in AnyProtocol]: RunPublisher };

export function publisherFor(protocol: AnyProtocol): RunPublisher {
  return PUBLISHERS[protocol];
}

export function consumerFor(protocol: Protocol): RunConsumer {
  return CLIENTS[protocol].consumer;
}

/** The failure spec with its action typed as the protocol's (the CLI has refused the other protocol's actions). */
function failureOf<A extends string>(failure: FailureSpec<string> | undefined, isOwn: (action: string) => action is A): FailureSpec<A> | undefined {
  if (failure === undefined) return undefined;
  const { action } = failure;
  if (!isOwn(action)) throw new UsageError(`--on-failure ${action} does not go with this --protocol`);
  return { ...failure, action };
}
