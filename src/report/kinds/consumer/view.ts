import type { ConsumerResult } from '../../../client/consumer-result.js';
import { PROTOCOLS, type Protocol } from '../../../client/protocol.js';
import { n } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { leaf, num, obj, opt } from '../../shape-check.js';
import { renderConsumer } from './text.js';

/**
 * `rmq-bench consumer`: one consumer's counts, the --store file it kept (null: none), and the
 * protocol it consumed with (a document without it was consumed over amqp091).
 */
export type ConsumerDocument = ConsumerResult & { readonly storeFile: string | null; readonly protocol?: Protocol };

export const consumer: KindView<ConsumerDocument> = {
  shape: obj<ConsumerDocument>({
    received: opt(num),
    processed: opt(num),
    duplicatesSkipped: opt(num),
    protocol: opt(leaf(PROTOCOLS.join(' or '), (v) => (PROTOCOLS as readonly unknown[]).includes(v))),
  }),
  text: (r) => renderConsumer(r, undefined),
  charts: none,
  figures: (d) => `received ${n(d.received)}, processed ${n(d.processed)}, duplicates skipped ${n(d.duplicatesSkipped)}`,
  reasons: none,
};
