import { Option } from 'commander';
import { clustersOption, contextsFor } from '../clusters-option.js';
import type { DeliveryLimitRunOptions } from '../../scenarios/demos/delivery-limit-demo.js';
import { PROTOCOLS, type ProtocolChoice, protocolsOf } from '../../scenarios/demos/delivery-limit-plan.js';
import { defineCommand } from '../command.js';
import { autoOption, durationOption, htmlOption, jsonOption, positiveInt } from '../options.js';
import { createStepper } from '../steps.js';

/** `rmq-bench delivery-limit-demo`: what a quorum queue's x-delivery-limit does under each AMQP 0-9-1 consumer action and AMQP 1.0 outcome. */
type DeliveryLimitDemoCliOptions = DeliveryLimitRunOptions & {
  json: boolean;
  html: string | undefined;
  auto: boolean;
  /** --clusters: the clusters to run on, in turn, side by side (names `cluster up` recorded); undefined: the configured one. */
  clusters: string[] | undefined;
};

export const deliveryLimitDemo = defineCommand({
  name: 'delivery-limit-demo',
  examples: [
    'delivery-limit-demo --auto',
    'delivery-limit-demo --delivery-limit 3 --rounds 8',
    'delivery-limit-demo --protocol amqp10',
    'delivery-limit-demo --loop-window 5s',
    'delivery-limit-demo --clusters v40,rmq-bench',
  ],
  register: (command, dispatch: (o: DeliveryLimitDemoCliOptions) => Promise<void>) =>
    command
      .summary('x-delivery-limit under 0-9-1 actions and 1.0 outcomes')
      .description(
        "a quorum queue's x-delivery-limit under each AMQP 0-9-1 consumer action (ack, reject, nack, with and without requeue, a closed connection, a consumer timeout) and each AMQP 1.0 outcome (accepted, released, rejected, modified with and without delivery-failed, undeliverable-here), without and with a dead-letter exchange: each delivery's delivery count and the message's fate, beside the rule RabbitMQ 4.3 documents; where the message loops for ever, how fast",
      )
      .addOption(new Option('--delivery-limit <n>', 'x-delivery-limit of each queue').argParser(positiveInt).default(2))
      .addOption(new Option('--rounds <n>', 'deliveries of the message at most, per action').argParser(positiveInt).default(6))
      .addOption(new Option('--protocol <protocol>', "the consumers' protocol: AMQP 0-9-1, AMQP 1.0, or both").choices([...PROTOCOLS, 'both']).default('both'))
      .addOption(
        durationOption(
          '--loop-window <duration>',
          'where the message loops for ever after the rounds: how long a push consumer doing the same action at once counts its deliveries (0: off)',
          '1s',
        ),
      )
      .addOption(clustersOption())
      .addOption(autoOption())
      .addOption(jsonOption())
      .addOption(htmlOption())
      .action(
        (o: {
          json: boolean;
          html?: string;
          auto: boolean;
          deliveryLimit: number;
          rounds: number;
          protocol: ProtocolChoice;
          loopWindow: number;
          clusters?: string[];
        }) =>
          dispatch({
            json: o.json,
            html: o.html,
            auto: o.auto,
            clusters: o.clusters,
            deliveryLimit: o.deliveryLimit,
            rounds: o.rounds,
            protocol: o.protocol,
            loopWindowMs: o.loopWindow,
          }),
      ),
  async run(commandCtx, o) {
    const { json, html, auto, clusters, ...options } = o;
    const { requireBrokerFeature } = await import('../../cluster/broker/broker-info.js');
    const { requireProtocols } = await import('../require-protocol.js');
    const { runDeliveryLimitDemo } = await import('../../scenarios/demos/delivery-limit-demo.js');
    const { sideBySideResult } = await import('../../scenarios/demos/delivery-limit-plan.js');
    const { emit } = await import('../output.js');
    // Each cluster's context, every one refused at once if it cannot run the demo, before any runs.
    const contexts = await contextsFor(commandCtx, clusters);
    for (const ctx of contexts) {
      // The rules it checks are RabbitMQ 4's (a delivery limit on every quorum queue, AMQP 1.0's outcomes).
      await requireBrokerFeature(ctx, 'delivery-limit-default', "delivery-limit-demo (RabbitMQ 4's delivery limit)");
      await requireProtocols(ctx, protocolsOf(options.protocol), `delivery-limit-demo --protocol ${options.protocol}`);
    }
    const runs = [];
    for (const ctx of contexts) {
      if (contexts.length > 1) ctx.progress.info(`delivery-limit-demo on cluster ${ctx.config.clusterName}`);
      runs.push({
        cluster: ctx.config.clusterName,
        result: await runDeliveryLimitDemo(ctx, options, createStepper({ auto, progress: ctx.progress, signal: ctx.signal })),
      });
    }
    const r = runs.length === 1 ? runs[0]!.result : sideBySideResult(runs);
    emit({ json, html, broker: await contexts[0]!.broker() }, 'delivery-limit-demo', r);
    return { ok: r.ok };
  },
});
