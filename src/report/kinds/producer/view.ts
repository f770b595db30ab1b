import type { PublisherResult } from '../../../client/publisher-result.js';
import { n } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { num, obj, opt } from '../../shape-check.js';
import { renderProducer } from './text.js';

/** `rmq-bench producer`: one publisher's counts, and the --ledger file it wrote (null: none). */
export type ProducerDocument = PublisherResult & { readonly reportFile: string | null };

export const producer: KindView<ProducerDocument> = {
  shape: obj<PublisherResult>({ written: opt(num), confirmed: opt(num), nacked: opt(num), indeterminate: opt(num) }),
  text: renderProducer,
  charts: none,
  figures: (d) => `written ${n(d.written)}, confirmed ${n(d.confirmed)}, nacked ${n(d.nacked)}, indeterminate ${n(d.indeterminate)}`,
  reasons: none,
};
