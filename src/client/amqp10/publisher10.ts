import type { Delivery, EventContext, Message } from 'rhea';
import { UsageError } from '../../errors.js';
import { type Ledger, messageId } from '../../ledger/ledger.js';
import { encodePublishedAtUs, PUBLISHED_AT_US_HEADER } from '../../measure/published-at.js';
import { maskUrl } from '../../url.js';
import { modeRules } from '../publish-rules.js';
import type { AckVisitor } from '../confirm-book.js';
import { AMQP10_MODES } from '../protocol.js';
import type { PublishAnswers } from '../publish-answers.js';
import { type PublishProtocol, PublishRun } from '../publish-run.js';
import type { PublisherHooks, PublisherOptions } from '../publisher-options.js';
import type { Amqp10Outcomes, PublisherResult } from '../publisher-result.js';
import { targetAddress } from './connection.js';
import { OUTCOME_RULES, OUTCOMES, type Outcome, RejectionTally, rejectionOf } from './outcomes.js';
import { dropSession, type SendSession, sendTransport } from './send-session.js';

/**
 * The producer over AMQP 1.0 (rhea): the shared run (publish-run.ts: the loop, the confirm book,
 * the ledger, the same options, hooks and result as over 0-9-1), and the outcome counts AMQP 1.0
 * adds. mode 'async' sends unsettled transfers, at most `window` awaiting an outcome (sync: one);
 * 'none' sends them pre-settled (no outcome: AMQP 1.0's confirms-off). Each outcome settles its
 * transfer as outcomes.ts's rules say: accepted confirms it, released returns it, rejected and
 * modified refuse it (sent again after a backoff, as a 0-9-1 nack). Link credit from the broker
 * bounds what is sent in both modes; none for the blocked timeout ends the run. Returns data;
 * never prints.
 */

/** How many transfers a burst sends before letting the socket and the broker's frames in. */
const BURST = 256;

type Tagged = Delivery & { bookTag?: number };

export async function runPublisher10(opts: PublisherOptions, ledger: Ledger, hooks: PublisherHooks): Promise<PublisherResult> {
  if (!(AMQP10_MODES as readonly string[]).includes(opts.mode)) {
    throw new UsageError(`publish mode ${opts.mode} has no AMQP 1.0 form (AMQP 1.0: ${AMQP10_MODES.join(', ')})`);
  }
  // rhea on the first run, not at import: the CLI's option parsing must stay cheap.
  const { default: rhea } = await import('rhea');
  const link = new LinkProtocol(opts, rhea.message.data_section(Buffer.alloc(opts.sizeBytes, 0x61)));
  return new PublishRun(opts, ledger, hooks, link).publishAll(() => ({ amqp10: link.outcomes() }));
}

/** The run's AMQP 1.0 side: a sender link, its transfers, the outcomes the broker settles them with, and their counts. */
class LinkProtocol implements PublishProtocol<SendSession> {
  readonly rules;
  readonly transport;
  readonly answer = 'outcome';
  readonly burst = BURST;
  readonly #opts: PublisherOptions;
  /** The body as an AMQP 1.0 data section. */
  readonly #section: unknown;
  readonly #idPrefix: string;
  readonly #counts = { accepted: 0, released: 0, rejected: 0, modified: 0, inDoubt: 0, timedOut: 0 };
  readonly #rejections = new RejectionTally();

  constructor(opts: PublisherOptions, section: unknown) {
    this.#opts = opts;
    this.#section = section;
    this.#idPrefix = messageId(opts.runId, 0).slice(0, -1);
    this.rules = modeRules(opts.mode, opts.window, opts.batchSize);
    this.transport = sendTransport(targetAddress(opts.exchange, opts.routingKey), opts.mode === 'none');
  }

  outcomes(): Amqp10Outcomes {
    return { settlement: this.rules.confirms ? 'on-outcome' : 'pre-settled', ...this.#counts, rejections: this.#rejections.list() };
  }

  send(s: SendSession, seq: number, atMs: number): boolean {
    const delivery: Tagged = s.sender.send(this.#message(seq, atMs));
    delivery.bookTag = ++s.sent;
    return true;
  }

  canSend(s: SendSession): boolean {
    return s.sender.sendable();
  }

  starved(s: SendSession, forMs: number, limitMs: number): string {
    return `the broker granted ${maskUrl(s.url)} no link credit for ${(forMs / 1000).toFixed(1)} s, past the blocked timeout (${limitMs} ms): a resource alarm (rabbitmq-diagnostics alarms) or a queue that takes nothing; raise --blocked-timeout to wait longer`;
  }

  /** Given up by the loop: its unsettled transfers are in doubt (sent again), its outcomes no longer counted, its connection closed. */
  lost(s: SendSession, inDoubt: number): string {
    s.dropped = true;
    this.#counts.inDoubt += inDoubt;
    dropSession(s);
    return inDoubt > 0 ? `; ${inDoubt} in doubt, published again` : '';
  }

  timedOut(n: number): void {
    this.#counts.timedOut += n;
  }

  open(s: SendSession, channel: number, run: PublishAnswers): void {
    for (const outcome of OUTCOMES) {
      s.sender.on(outcome, (ctx: EventContext) => {
        const tag = (ctx.delivery as Tagged | undefined)?.bookTag;
        if (tag !== undefined && !s.dropped) this.#settled(run, channel, tag, outcome, ctx.delivery!);
      });
    }
  }

  /** The broker's outcome for the transfer with this tag: into the ledger by OUTCOME_RULES; once per transfer. */
  #settled(run: PublishAnswers, channel: number, tag: number, outcome: Outcome, delivery: Delivery): void {
    const at = run.clock.now();
    const rule = OUTCOME_RULES[outcome];
    let visit: AckVisitor;
    if (rule.flag === 'confirmed') visit = run.confirmVisitor(at, run.hooks.inFaultWindow?.() ?? false);
    else if (rule.flag === 'returned') visit = (seq) => run.ledger.returned(seq);
    else {
      const why = outcome === 'rejected' ? rejectionOf(delivery.remote_state) : undefined;
      const reason = why ? `rejected: ${why.condition}${why.description ? `: ${why.description}` : ''}` : outcome;
      visit = (seq, sentAtMs) => {
        run.ledger.nack(seq);
        if (why) this.#rejections.add(why);
        run.hooks.onRefused?.();
        // A transfer that had no outcome in time was sent again already: the refusal policy follows that copy.
        if (rule.resend && sentAtMs !== undefined) run.refused(seq, reason, at);
      };
    }
    if (run.book.ack(channel, tag, false, visit) === 0) return;
    this.#counts[outcome]++;
    if (rule.flag !== 'nacked') run.tally.progressed(at);
    run.answered(at);
  }

  #message(seq: number, atMs: number): Message {
    const opts = this.#opts;
    const id = this.#idPrefix + seq;
    const body = this.#section;
    if (opts.leanProperties) {
      const props = opts.publishedAtUs ? { [PUBLISHED_AT_US_HEADER]: encodePublishedAtUs(atMs) } : undefined;
      return { message_id: id, durable: opts.persistent, body, ...(props ? { application_properties: props } : {}) } as unknown as Message;
    }
    const props: Record<string, unknown> = { 'x-rmq-bench-run': opts.runId, 'x-rmq-bench-seq': seq, 'x-rmq-bench-published-at': Date.now() };
    if (opts.publishedAtUs) props[PUBLISHED_AT_US_HEADER] = encodePublishedAtUs(atMs);
    const message = {
      message_id: id,
      durable: opts.persistent,
      content_type: 'application/octet-stream',
      creation_time: new Date(),
      application_properties: props,
      body,
    };
    return message as unknown as Message;
  }
}
