import type { Channel, ConfirmChannel, Message } from 'amqplib';
import { InterruptedError } from '../../errors.js';
import { type Ledger, parseMessageId } from '../../ledger/ledger.js';
import type { FlushOutcome, TimelineEvent } from '../publish-loop.js';
import { type PublishProtocol, PublishRun } from '../publish-run.js';
import type { PublisherHooks, PublisherOptions } from '../publisher-options.js';
import type { PublisherResult } from '../publisher-result.js';
import { modeRules, type PublishMode } from '../publish-rules.js';
import { commitTx, createModeChannel, propertiesFor } from './publish-modes.js';
import { channelTransport, type ChannelSession } from './session.js';

/**
 * The AMQP 0-9-1 producer: the shared run (publish-run.ts: the loop, the confirm book, the
 * ledger) over amqplib. A message is a basic.publish on a channel in the mode's state (confirm
 * mode, tx, or neither); the broker answers with basic.ack and basic.nack by delivery tag (a nack
 * is a refusal), with basic.return for an unroutable mandatory message, or, in tx, with the
 * commit-ok. Returns data; never prints.
 */

export type { FlushOutcome, PublishMode, TimelineEvent };

/** basic.nack carries no reason: the refusal's reason in the timeline. */
const NACK_REASON = 'basic.nack';

type Session = ChannelSession<Channel | ConfirmChannel, object>;
type AckFrame = { deliveryTag: number; multiple: boolean };

export async function runPublisher(opts: PublisherOptions, ledger: Ledger, hooks: PublisherHooks): Promise<PublisherResult> {
  return new PublishRun(opts, ledger, hooks, channelProtocol(opts)).publishAll();
}

/** The run's 0-9-1 side: the mode's channel, basic.publish, and the broker's acks, nacks, returns and commit-oks. */
function channelProtocol(opts: PublisherOptions): PublishProtocol<Session> {
  const rules = modeRules(opts.mode, opts.window, opts.batchSize);
  const body = Buffer.alloc(opts.sizeBytes, 0x61);
  const propertiesOf = propertiesFor(opts);
  const { exchange, routingKey } = opts;
  return {
    transport: channelTransport(
      (connection) => createModeChannel(connection, rules),
      () => ({}),
    ),
    rules,
    answer: 'confirm',
    send: (s, seq, atMs) => s.channel.publish(exchange, routingKey, body, propertiesOf(seq, atMs)),
    commit: (s) => commitTx(s.channel),
    open(s, channel, run) {
      s.channel.on('return', (msg: Message) => {
        const id = parseMessageId(String(msg.properties.messageId ?? ''));
        if (id && id.runId === opts.runId) run.ledger.returned(id.seq);
      });
      if (!rules.confirms && !rules.tx) return;
      // One ack frame (multiple: many messages): one clock read, one wake-up.
      s.channel.on('ack', (f: AckFrame) => {
        const at = run.clock.now();
        const inFault = run.hooks.inFaultWindow?.() ?? false;
        if (run.book.ack(channel, f.deliveryTag, f.multiple, run.confirmVisitor(at, inFault)) === 0) return;
        run.tally.progressed(at);
        run.answered(at);
      });
      // A nack: the broker refused them; each is published again after its backoff, or given up (it stays nacked).
      const onNacked = (seq: number): void => {
        run.ledger.nack(seq);
        run.refused(seq, NACK_REASON, run.clock.now());
        run.hooks.onRefused?.();
      };
      s.channel.on('nack', (f: AckFrame) => {
        if (run.book.nack(channel, f.deliveryTag, f.multiple, onNacked) > 0) run.wake();
      });
    },
  };
}

/** A fresh run id: short, no '-' (message ids are `${runId}-${seq}`). */
export function newRunId(): string {
  return `r${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

/**
 * A demo's setup: `count` persistent 100-byte messages to exchange/routingKey with async
 * confirms (window 256), recorded in ledger. Ctrl+C: InterruptedError.
 */
export async function publishConfirmed(
  o: { urls: readonly string[]; exchange: string; routingKey: string; count: number; runId: string; signal: AbortSignal },
  ledger: Ledger,
): Promise<PublisherResult> {
  const pub = await runPublisher(
    {
      urls: o.urls,
      startIndex: 0,
      exchange: o.exchange,
      routingKey: o.routingKey,
      count: o.count,
      ratePerSec: 0,
      sizeBytes: 100,
      persistent: true,
      mandatory: false,
      mode: 'async',
      window: 256,
      batchSize: 100,
      confirmTimeoutMs: 10_000,
      heartbeatS: 5,
      reconnectTimeoutMs: 30_000,
      runId: o.runId,
    },
    ledger,
    { signal: o.signal },
  );
  if (pub.interrupted) throw new InterruptedError();
  return pub;
}
