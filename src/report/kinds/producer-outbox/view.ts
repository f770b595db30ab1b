import type { OutboxProducerResult } from '../../../client/outbox-producer.js';
import { type KindView, none } from '../../kind-view.js';
import { renderOutboxProducer } from './text.js';

/** `rmq-bench producer --outbox`: messages written to a local outbox, then relayed with confirms. */
export const producerOutbox: KindView<OutboxProducerResult> = { shape: null, text: renderOutboxProducer, charts: none, figures: () => '', reasons: none };
