import type { PublishMode } from '../../client/publish-rules.js';
import { type AnyProtocol, PROTOCOLS } from '../../client/protocol.js';

/**
 * compare's sides: each a protocol and a way to publish. Over AMQP 0-9-1, async confirms or none;
 * over AMQP 1.0, transfers settled on the broker's outcome or sent pre-settled; over the native
 * stream protocol, each publishing id confirmed (and deduplicated under the run's reference). Pure.
 */

const COMPARE_MODES = ['confirms-on', 'confirms-off', 'amqp10-outcomes', 'amqp10-presettled', 'stream-confirms'] as const;
export type CompareMode = (typeof COMPARE_MODES)[number];

interface CompareModeRule {
  protocol: AnyProtocol;
  publishMode: PublishMode;
  /** The broker tells the producer what became of each message: the side the claim is about (no confirmed message lost). */
  confirms: boolean;
  /** Column header and timeline label. */
  label: string;
}

export const MODE_RULES: Readonly<Record<CompareMode, CompareModeRule>> = {
  'confirms-on': { protocol: 'amqp091', publishMode: 'async', confirms: true, label: 'confirms on' },
  'confirms-off': { protocol: 'amqp091', publishMode: 'none', confirms: false, label: 'confirms off' },
  'amqp10-outcomes': { protocol: 'amqp10', publishMode: 'async', confirms: true, label: '1.0 outcomes' },
  'amqp10-presettled': { protocol: 'amqp10', publishMode: 'none', confirms: false, label: '1.0 pre-settled' },
  'stream-confirms': { protocol: 'stream', publishMode: 'async', confirms: true, label: 'stream confirms' },
};

/** The sides to run, in table order: for each protocol asked (both: the two AMQP ones), confirms on then off. */
export function compareModes(protocol: AnyProtocol | 'both', confirms: 'on' | 'off' | 'both'): CompareMode[] {
  const protocols: AnyProtocol[] = protocol === 'both' ? [...PROTOCOLS] : [protocol];
  return COMPARE_MODES.filter((m) => {
    const r = MODE_RULES[m];
    return protocols.includes(r.protocol) && (confirms === 'both' || r.confirms === (confirms === 'on'));
  });
}

/** Whether a mode (as a document names it) is one whose claim is "no confirmed message lost"; false for a name it does not know. */
export function isConfirmingMode(mode: unknown): boolean {
  return typeof mode === 'string' && Object.hasOwn(MODE_RULES, mode) && MODE_RULES[mode as CompareMode].confirms;
}

export function modeLabel(mode: CompareMode): string {
  return MODE_RULES[mode]?.label ?? String(mode);
}
