import { runPublisher } from './amqp091/publisher.js';
import type { PublisherHooks, PublisherOptions } from './publisher-options.js';
import type { PublisherResult } from './publisher-result.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Protocol } from './protocol.js';
import { runPublisher10 } from './amqp10/publisher10.js';

/** The producer of each protocol: the same options, ledger, hooks and result. */
const PUBLISHERS: Readonly<Record<Protocol, (opts: PublisherOptions, ledger: Ledger, hooks: PublisherHooks) => Promise<PublisherResult>>> = {
  amqp091: runPublisher,
  amqp10: runPublisher10,
};

export function publisherFor(protocol: Protocol): (opts: PublisherOptions, ledger: Ledger, hooks: PublisherHooks) => Promise<PublisherResult> {
  return PUBLISHERS[protocol];
}
