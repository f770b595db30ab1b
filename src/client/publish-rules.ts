/**
 * The five ways to publish, and what each means for the publish loop, whatever the protocol
 * (AMQP 1.0 has none, sync and async: PROTOCOL_TRAITS). Pure.
 */

export type PublishMode = 'none' | 'tx' | 'sync' | 'batch' | 'async';

export interface ModeRules {
  /** Broker confirms (sync, batch, async). */
  confirms: boolean;
  tx: boolean;
  /** batch: publish a batch, then wait for all of it. */
  batch: boolean;
  /** Outstanding confirms at most (tx and none: unbounded). */
  window: number;
}

export function modeRules(mode: PublishMode, window: number, batchSize: number): ModeRules {
  const confirms = mode === 'sync' || mode === 'batch' || mode === 'async';
  return {
    confirms,
    tx: mode === 'tx',
    batch: mode === 'batch',
    window: mode === 'sync' ? 1 : mode === 'batch' ? batchSize : mode === 'async' ? window : Infinity,
  };
}
