import type { ProducerReport } from '../../../scenarios/traffic/producer.js';
import { type KindView, none } from '../../kind-view.js';
import { renderProducer } from '../producer/text.js';

/**
 * The file `rmq-bench producer --ledger` writes (its ledger, for `rmq-bench verify`): not printed
 * by a command, read by `rmq-bench report`; its text is the producer's own report.
 */
export const producerReport: KindView<Omit<ProducerReport, 'schemaVersion' | 'kind'>> = {
  shape: null,
  text: (r) => renderProducer(r.result),
  charts: none,
  figures: () => '',
  reasons: none,
};
