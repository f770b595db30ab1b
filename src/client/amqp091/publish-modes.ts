import type { Channel, ChannelModel, ConfirmChannel, Options } from 'amqplib';
import { messageId } from '../../ledger/ledger.js';
import { encodePublishedAtUs, PUBLISHED_AT_US_HEADER } from '../../measure/published-at.js';
import type { ModeRules } from '../publish-rules.js';

/** What each of the five ways to publish does on a 0-9-1 channel (what each means for the loop: publish-rules.ts). Pure but for the channel calls. */

/** AMQP 0-9-1 class tx (90): select (10) and commit (20); amqplib has no public API for them. */
const TX_SELECT = (90 << 16) | 10;
const TX_SELECT_OK = (90 << 16) | 11;
const TX_COMMIT = (90 << 16) | 20;
const TX_COMMIT_OK = (90 << 16) | 21;
type RpcChannel = Channel & { rpc(method: number, fields: object, expect: number): Promise<unknown> };

/** The channel a mode publishes on: a confirm channel, a channel in tx mode, or a plain one. */
export async function createModeChannel(connection: ChannelModel, rules: ModeRules): Promise<Channel | ConfirmChannel> {
  const channel: Channel | ConfirmChannel = rules.confirms ? await connection.createConfirmChannel() : await connection.createChannel();
  if (rules.tx) await (channel as RpcChannel).rpc(TX_SELECT, {}, TX_SELECT_OK);
  return channel;
}

export async function commitTx(channel: Channel): Promise<void> {
  await (channel as RpcChannel).rpc(TX_COMMIT, {}, TX_COMMIT_OK);
}

interface PropertyOptions {
  runId: string;
  persistent: boolean;
  mandatory: boolean;
  publishedAtUs?: boolean;
  leanProperties?: boolean;
}

/**
 * The properties of message seq published at atMs (performance.now()): full or lean. Valid until
 * the next call: every call returns the same headers object with this message's values in it.
 */
type PropertiesOf = (seq: number, atMs: number) => Options.Publish;

/**
 * amqplib's publish() makes each message's header table an object whose prototype is the headers
 * given (Object.create(options.headers)) and encodes it at once. A fresh headers object per
 * message makes a fresh prototype per message, which V8 sets up anew each time: about 1.5 µs of
 * CPU a message, a tenth of a publisher's. One headers object, its values set before each
 * publish, is encoded to the same bytes.
 */
export function propertiesFor(opts: PropertyOptions): PropertiesOf {
  // Checks the run id once; then `${runId}-${seq}` is what messageId() would build.
  const prefix = messageId(opts.runId, 0).slice(0, -1);
  const { persistent, mandatory, runId } = opts;
  if (opts.leanProperties) {
    // Only message_id, delivery mode and (with publishedAtUs) the publish time: for throughput runs.
    if (!opts.publishedAtUs) return (seq) => ({ messageId: prefix + seq, persistent, mandatory });
    const headers = { [PUBLISHED_AT_US_HEADER]: 0 };
    return (seq, atMs) => {
      headers[PUBLISHED_AT_US_HEADER] = encodePublishedAtUs(atMs);
      return { messageId: prefix + seq, persistent, mandatory, headers };
    };
  }
  // What every message carries by default: its id, its run and sequence, its publish time.
  const headers: Record<string, unknown> = { 'x-rmq-bench-run': runId, 'x-rmq-bench-seq': 0, 'x-rmq-bench-published-at': 0 };
  if (opts.publishedAtUs) headers[PUBLISHED_AT_US_HEADER] = 0;
  return (seq, atMs) => {
    headers['x-rmq-bench-seq'] = seq;
    headers['x-rmq-bench-published-at'] = Date.now();
    if (opts.publishedAtUs) headers[PUBLISHED_AT_US_HEADER] = encodePublishedAtUs(atMs);
    return {
      messageId: prefix + seq,
      persistent,
      mandatory,
      contentType: 'application/octet-stream',
      timestamp: Math.floor(Date.now() / 1000),
      headers,
    };
  };
}
