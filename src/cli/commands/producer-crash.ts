import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { runOutboxProducer } from '../../amqp/outbox-producer.js';
import { newRunId } from '../../amqp/publisher.js';
import { amqpUrl } from '../../config.js';
import type { Context } from '../../context.js';
import { BrokerUnavailableError, InterruptedError } from '../../errors.js';
import { renderOutboxProducer, renderProducerCrash } from '../../report/producer-crash.js';
import { runProducerCrash, type ProducerCrashOptions } from '../../scenarios/producer-crash.js';
import { openOutbox } from '../../store/outbox.js';
import { emit } from '../output.js';
import type { ProducerCrashCliOptions } from '../program-producer-crash.js';
import type { ProducerCliOptions, ProducerHarness } from '../program.js';

export async function producerCrash(ctx: Context, o: ProducerCrashCliOptions): Promise<number> {
  const { json, html, seed, ...rest } = o;
  // No --seed: a random one, shown in the report so that the same kill points can be replayed.
  const options: ProducerCrashOptions = { ...rest, seed: seed ?? Math.floor(Math.random() * 0x1_0000_0000) };
  ctx.progress.info(`producer-crash: seed ${options.seed} (rerun the same kill points with --seed ${options.seed})`);
  const r = await runProducerCrash(ctx, options);
  emit({ json, html }, 'producer-crash', r, renderProducerCrash(r));
  return r.ok ? 0 : 1;
}

/**
 * The lines a parent process (producer-crash) reads on stdout: `at <n>` after every message
 * (where the run is), and with --print-sent `sent <n>` every so many messages (the naive
 * producer's own log: the number a restart resumes after). Written synchronously (a pipe
 * on Linux), so that what the parent has read is what the producer had printed when killed.
 */
export function harnessPrinter(h: ProducerHarness | undefined, write: (s: string) => void = (s) => process.stdout.write(s)): ((position: number) => void) | undefined {
  if (!h || (!h.progressLines && h.printSentEvery === undefined)) return undefined;
  return (position) => {
    let out = h.progressLines ? `at ${position}\n` : '';
    if (h.printSentEvery !== undefined && position % h.printSentEvery === 0) out += `sent ${position - 1}\n`;
    if (out) write(out);
  };
}

/** `producer --outbox <file>`: the events go to the outbox first; a relay publishes them. */
export async function producerWithOutbox(ctx: Context, o: ProducerCliOptions & { outboxFile: string }): Promise<number> {
  await mkdir(path.dirname(path.resolve(o.outboxFile)), { recursive: true });
  const store = openOutbox(o.outboxFile, { create: { runId: o.harness?.runId ?? newRunId(), count: o.count } });
  const { progress } = ctx;
  const print = o.harness?.progressLines ? (n: number): void => void process.stdout.write(`at ${n}\n`) : undefined;
  try {
    const before = store.counts();
    print?.(before.published);
    progress.start(
      before.written > 0
        ? `resuming ${o.outboxFile}: ${before.written}/${o.count} events written, ${before.pending} pending`
        : `writing ${o.count} events to the outbox ${o.outboxFile}; the relay publishes them to ${o.exchange || '(default exchange)'} (${o.routingKey})`,
    );
    let published = before.published;
    let connections = 0;
    const ticker = setInterval(() => progress.update(`outbox: ${published}/${o.count} published`), 250);
    let r;
    try {
      r = await runOutboxProducer(
        store,
        {
          urls: o.urls ?? ctx.config.nodes.map((n) => amqpUrl(ctx.config, n)),
          startIndex: 0,
          exchange: o.exchange,
          routingKey: o.routingKey,
          ratePerSec: o.ratePerSec,
          sizeBytes: o.sizeBytes,
          persistent: o.persistent,
          mandatory: o.mandatory,
          window: o.window,
          confirmTimeoutMs: o.confirmTimeoutMs,
          heartbeatS: o.heartbeatS,
          reconnectTimeoutMs: o.reconnectTimeoutMs,
        },
        {
          signal: ctx.signal,
          onPublished: (n) => {
            published = n;
            print?.(n);
          },
          onEvent: (e) => {
            if (e.type === 'connected' && connections++ === 0) return;
            progress.info(`${(e.atMs / 1000).toFixed(2)} s ${e.type}: ${e.detail}`);
          },
        },
      );
    } finally {
      clearInterval(ticker);
      progress.stop();
    }
    emit(o, 'producer-outbox', r, renderOutboxProducer(r));
    if (r.interrupted) throw new InterruptedError('interrupted: the pending rows stay in the outbox; the same command resumes them');
    if (r.gaveUp !== null) {
      throw new BrokerUnavailableError(`the outbox relay gave up with ${r.atEnd.pending} rows pending: ${r.gaveUp}`, { hint: 'the outbox keeps them: the same command resumes' });
    }
    return 0;
  } finally {
    store.close();
  }
}
