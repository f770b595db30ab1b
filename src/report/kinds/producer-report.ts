import type { ProducerReport } from '../../scenarios/producer.js';
import { renderProducer } from '../compare.js';
import { type KindView, none } from '../kind-view.js';

/**
 * The file `rmq-bench producer --report` writes (its ledger, for `rmq-bench verify`): not printed
 * by a command, read by `rmq-bench report`; its text is the producer's own report.
 */
export const producerReport: KindView<Omit<ProducerReport, 'schemaVersion' | 'kind'>> = {
  shape: null,
  text: (r) => renderProducer(r.result),
  charts: none,
  figures: () => '',
  reasons: none,
};
