import type { Rejection } from '../publisher-result.js';

/**
 * What an AMQP 1.0 publisher learns about each message, and what the ledger makes of it. Pure.
 *
 * RabbitMQ 4 settles every transfer it takes with one of these (rabbit_amqp_session.erl):
 *   accepted  every queue the message was routed to has stored it (the 0-9-1 ack);
 *   released  routed to no queue (the 0-9-1 basic.return of a mandatory message);
 *   rejected  a queue refused it: full with reject-publish (amqp:resource-limit-exceeded), or
 *             unavailable (amqp:precondition-failed), with the queue's name and the reason;
 *   modified  the broker never sends it to a publisher; counted if it ever does.
 * A transfer still unsettled when its link or connection drops, or with no outcome within the
 * confirm timeout, is in doubt: the broker may or may not have stored it.
 */

export const OUTCOMES = ['accepted', 'released', 'rejected', 'modified'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** What the ledger records for an outcome, and whether the message is sent again. */
interface OutcomeRule {
  /** accepted: confirmed; released: returned (known unroutable); rejected and modified: nacked. */
  flag: 'confirmed' | 'returned' | 'nacked';
  /** Sent again (at-least-once), after a backoff and at most MAX_REFUSALS times (client/refused-resends.ts), as after a 0-9-1 nack. */
  resend: boolean;
}

/**
 * A released message is not sent again: nothing would route it next time either (the 0-9-1
 * publisher does not republish a returned one). A rejected or modified one is, as a nacked one is
 * over 0-9-1, with a backoff and a limit: the queue may take it once it has room or a leader again.
 */
export const OUTCOME_RULES: Readonly<Record<Outcome, OutcomeRule>> = {
  accepted: { flag: 'confirmed', resend: false },
  released: { flag: 'returned', resend: false },
  rejected: { flag: 'nacked', resend: true },
  modified: { flag: 'nacked', resend: true },
};

/** The outcome a rhea delivery state names, or undefined (no state, or one the publisher does not know). Pure. */
export function outcomeOf(state: unknown): Outcome | undefined {
  const name = (state as { constructor?: { composite_type?: unknown } } | null | undefined)?.constructor?.composite_type;
  return typeof name === 'string' && (OUTCOMES as readonly string[]).includes(name) ? (name as Outcome) : undefined;
}

/** A rejected state's error, as text (condition and description may be absent). Pure. */
export function rejectionOf(state: unknown): Rejection {
  const error = (state as { error?: { condition?: unknown; description?: unknown } } | null | undefined)?.error;
  return {
    condition: typeof error?.condition === 'string' ? error.condition : '(no condition)',
    description: typeof error?.description === 'string' ? error.description : '',
  };
}

/** Counts rejections by condition and description. */
export class RejectionTally {
  readonly #byKey = new Map<string, Rejection & { count: number }>();

  add(r: Rejection): void {
    const key = `${r.condition}\u0000${r.description}`;
    const seen = this.#byKey.get(key);
    if (seen) seen.count++;
    else this.#byKey.set(key, { ...r, count: 1 });
  }

  /** Most frequent first; ties by condition, then description. */
  list(): (Rejection & { count: number })[] {
    return [...this.#byKey.values()].sort((a, b) => b.count - a.count || a.condition.localeCompare(b.condition) || a.description.localeCompare(b.description));
  }
}
