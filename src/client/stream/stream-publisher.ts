import { UsageError } from '../../errors.js';
import { type Ledger, messageId } from '../../ledger/ledger.js';
import { encodePublishedAtUs, PUBLISHED_AT_US_HEADER } from '../../measure/published-at.js';
import type { AckVisitor } from '../confirm-book.js';
import type { PublishAnswers } from '../publish-answers.js';
import { modeRules } from '../publish-rules.js';
import { type PublishProtocol, PublishRun } from '../publish-run.js';
import type { PublisherHooks, PublisherOptions } from '../publisher-options.js';
import type { PublisherResult, StreamPublishCounts } from '../publisher-result.js';
import { coveredByStored, publisherRefOf, publishingIdOf, seqOfPublishingId } from './stream-ids.js';
import { type StreamSession, streamTransport } from './stream-session.js';

/**
 * The producer over RabbitMQ's native stream protocol (rabbitmq-stream-js-client): the shared run
 * (publish-run.ts: the loop, the confirm book, the ledger, the same options, hooks and result as
 * over AMQP), publishing to the stream named by the routing key. Each message carries its
 * publishing id, seq + 1, under the run's publisher reference, and its id as message_id (a
 * string: the library sends numbers as 32-bit integers). The broker confirms each publishing id
 * once stored; a message in doubt (its connection lost, or no confirm in time) is sent again
 * with the SAME publishing id, and the broker drops it if it stored the first copy already
 * (deduplication: an id not above the last one stored for the reference), confirming it all the
 * same. Returns data; never prints.
 */

/** How many sends a burst makes before the library writes them and the broker's confirms come in. */
const BURST = 256;

export async function runStreamPublisher(opts: PublisherOptions, ledger: Ledger, hooks: PublisherHooks): Promise<PublisherResult> {
  if (opts.mode !== 'async') throw new UsageError(`publish mode ${opts.mode} has no native stream form (it confirms each publishing id: async)`);
  if (opts.exchange !== '') throw new UsageError('the native stream protocol publishes to a stream by name: no --exchange');
  if (!opts.streamUrls || opts.streamUrls.length === 0) throw new UsageError("the native stream protocol needs the nodes' stream URLs (rabbitmq-stream://)");
  const protocol = new StreamProtocol(opts);
  return new PublishRun({ ...opts, urls: opts.streamUrls }, ledger, hooks, protocol).publishAll(() => ({ stream: protocol.counts() }));
}

class StreamProtocol implements PublishProtocol<StreamSession> {
  readonly rules;
  readonly transport;
  readonly answer = 'confirm';
  readonly burst = BURST;
  readonly #opts: PublisherOptions;
  readonly #body: Buffer;
  readonly #idPrefix: string;
  readonly #ref: string;
  readonly #counts = { confirms: 0, errors: 0, inDoubtResent: 0, resentOnReconnect: 0, storedAlready: 0, timedOut: 0, sessions: 0 };

  constructor(opts: PublisherOptions) {
    this.#opts = opts;
    this.#body = Buffer.alloc(opts.sizeBytes, 0x61);
    this.#idPrefix = messageId(opts.runId, 0).slice(0, -1);
    this.#ref = publisherRefOf(opts.runId);
    this.rules = modeRules('async', opts.window, opts.batchSize);
    this.transport = streamTransport(opts.routingKey, this.#ref, opts.sizeBytes);
  }

  counts(): StreamPublishCounts {
    return { publisherRef: this.#ref, ...this.#counts };
  }

  send(s: StreamSession, seq: number, atMs: number): boolean {
    if (s.lost) throw new Error('the stream session is closed');
    const props: Record<string, string> = { 'x-rmq-bench-run': this.#opts.runId, 'x-rmq-bench-seq': String(seq) };
    if (this.#opts.publishedAtUs) props[PUBLISHED_AT_US_HEADER] = String(encodePublishedAtUs(atMs));
    // basicSend queues the message at once (the library writes its queue on the next turn); a
    // failure later (the connection gone) surfaces as the session's loss.
    s.publisher
      .basicSend(publishingIdOf(seq), this.#body, {
        messageProperties: { messageId: this.#idPrefix + seq, contentType: 'application/octet-stream', creationTime: new Date() },
        applicationProperties: props,
      })
      .catch(() => undefined);
    s.tags.set(seq, ++s.sent);
    return true;
  }

  lost(s: StreamSession, inDoubt: number): string {
    s.dropped = true;
    this.#counts.inDoubtResent += inDoubt;
    this.transport.drop(s);
    return inDoubt > 0 ? `; ${inDoubt} in doubt, published again with the same publishing ids` : '';
  }

  timedOut(n: number): void {
    this.#counts.timedOut += n;
  }

  open(s: StreamSession, channel: number, run: PublishAnswers): void {
    this.#counts.sessions++;
    // What is about to be sent again, and how much of it the broker holds already (deduplication drops those copies).
    const again = run.book.backlog();
    this.#counts.resentOnReconnect += again.length;
    this.#counts.storedAlready += coveredByStored(again, s.storedUpTo);
    s.publisher.on('publish_confirm', (err, ids) => {
      if (s.dropped) return;
      const at = run.clock.now();
      if (err === null) this.#counts.confirms += ids.length;
      else this.#counts.errors += ids.length;
      for (const id of ids) this.#settled(s, run, channel, seqOfPublishingId(id), err, at);
    });
  }

  /** The broker's confirm (err null) or publish error for seq: into the ledger, once per send. */
  #settled(s: StreamSession, run: PublishAnswers, channel: number, seq: number, err: number | null, at: number): void {
    const tag = s.tags.get(seq);
    if (tag === undefined) return;
    s.tags.delete(seq);
    let visit: AckVisitor;
    if (err === null) visit = run.confirmVisitor(at, run.hooks.inFaultWindow?.() ?? false);
    else
      visit = (q, sentAtMs) => {
        run.ledger.nack(q);
        run.hooks.onRefused?.();
        if (sentAtMs !== undefined) run.refused(q, `publish error ${err}`, at);
      };
    if (run.book.ack(channel, tag, false, visit) === 0) return;
    if (err === null) run.tally.progressed(at);
    run.answered(at);
  }
}
