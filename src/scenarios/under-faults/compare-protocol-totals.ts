import { traitsOf } from '../../client/protocol.js';
import type { Amqp10Outcomes, PublisherResult, StreamPublishCounts } from '../../client/publisher-result.js';
import { type CompareMode, MODE_RULES } from './compare-modes.js';

/**
 * What a side's protocol adds to its totals over all runs: the AMQP 1.0 outcomes, or what the
 * native stream protocol sent again and deduplicated. Pure.
 */

/** AMQP 1.0 sides: the broker's outcomes (transfers: a message sent twice can count twice). */
export type OutcomeTotals = Omit<Amqp10Outcomes, 'settlement' | 'rejections'>;

/** Native stream protocol sides: what was sent again with the same publishing ids, and what of it the broker held already. */
export type StreamTotals = Omit<StreamPublishCounts, 'publisherRef'>;

export function protocolTotals(
  mode: CompareMode,
  rs: readonly { producer: Pick<PublisherResult, 'amqp10' | 'stream'> }[],
): { outcomes?: OutcomeTotals; stream?: StreamTotals } {
  const traits = traitsOf(MODE_RULES[mode].protocol);
  if (traits.outcomeCounts) {
    const sum = (f: (o: Amqp10Outcomes) => number): number => rs.reduce((a, r) => a + (r.producer.amqp10 ? f(r.producer.amqp10) : 0), 0);
    return {
      outcomes: {
        accepted: sum((o) => o.accepted),
        released: sum((o) => o.released),
        rejected: sum((o) => o.rejected),
        modified: sum((o) => o.modified),
        inDoubt: sum((o) => o.inDoubt),
        timedOut: sum((o) => o.timedOut),
      },
    };
  }
  if (!traits.dedupCounts) return {};
  const sum = (f: (o: StreamPublishCounts) => number): number => rs.reduce((a, r) => a + (r.producer.stream ? f(r.producer.stream) : 0), 0);
  return {
    stream: {
      confirms: sum((o) => o.confirms),
      errors: sum((o) => o.errors),
      inDoubtResent: sum((o) => o.inDoubtResent),
      resentOnReconnect: sum((o) => o.resentOnReconnect),
      storedAlready: sum((o) => o.storedAlready),
      timedOut: sum((o) => o.timedOut),
      sessions: sum((o) => o.sessions),
    },
  };
}
