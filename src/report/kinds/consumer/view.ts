import type { ConsumerResult } from '../../../amqp/consumer-result.js';
import { n } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { num, obj, opt } from '../../shape-check.js';
import { renderConsumer } from './text.js';

/** `rmq-bench consumer`: one consumer's counts, and the --store file it kept (null: none). */
export type ConsumerDocument = ConsumerResult & { readonly storeFile: string | null };

export const consumer: KindView<ConsumerDocument> = {
  shape: obj<ConsumerResult>({ received: opt(num), processed: opt(num), duplicatesSkipped: opt(num) }),
  text: (r) => renderConsumer(r, undefined),
  charts: none,
  figures: (d) => `received ${n(d.received)}, processed ${n(d.processed)}, duplicates skipped ${n(d.duplicatesSkipped)}`,
  reasons: none,
};
