import type { QueueType } from '../cluster/broker/queue-types.js';
import type { PublishMode } from './publish-rules.js';

/** The two AMQP protocols rmq-bench speaks to RabbitMQ, to publish and consume: AMQP 0-9-1 (amqplib) and AMQP 1.0 (rhea), RabbitMQ 4's own. No imports but types: the CLI declares --protocol with it. */
export const PROTOCOLS = ['amqp091', 'amqp10'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/**
 * Every protocol a producer speaks: the AMQP ones, and RabbitMQ's native stream protocol
 * (rabbitmq-stream-js-client), which publishes to a stream only (compare --queue-type stream).
 */
export const PUBLISH_PROTOCOLS = [...PROTOCOLS, 'stream'] as const;
export type AnyProtocol = (typeof PUBLISH_PROTOCOLS)[number];

/** What a command runs when --protocol is not given. */
export const DEFAULT_PROTOCOL: Protocol = 'amqp091';

/** The publish modes AMQP 1.0 has: transfers settled on the broker's outcome (async: a window; sync: one at a time) or pre-settled (none). tx and batch are AMQP 0-9-1's. */
export const AMQP10_MODES = ['async', 'sync', 'none'] as const satisfies readonly PublishMode[];

/** The publish modes AMQP 0-9-1 has (publish-modes.ts: what each does). */
const AMQP091_MODES = ['none', 'tx', 'sync', 'batch', 'async'] as const satisfies readonly PublishMode[];

/**
 * What a protocol's client can do, for the commands and scenarios to decide by instead of by
 * the protocol's name. Pure data: a command reads it while parsing its options.
 */
interface ProtocolTraits {
  /** For people: "AMQP 1.0". */
  readonly name: string;
  /** The broker feature (broker-versions.ts) a run over it needs, or null. */
  readonly brokerFeature: 'amqp10' | null;
  /** The publish modes it has. */
  readonly publishModes: readonly PublishMode[];
  /** Where several protocols run side by side (bench), the words before a run's label. */
  readonly labelPrefix: string;
  /** Acknowledges several deliveries at once (basic.ack multiple): --multi-ack-every applies; otherwise why not. */
  readonly multipleAcks: true | string;
  /** --prefetch bounds an autoack (pre-settled) consumer too: over AMQP 1.0 it is the link credit. */
  readonly prefetchBoundsAutoAck: boolean;
  /** The producer's result counts the broker's answers by outcome (PublisherResult.amqp10). */
  readonly outcomeCounts: boolean;
  /** The only queue type it publishes to, or null (any). */
  readonly onlyQueueType: QueueType | null;
  /** The producer's result counts what it sent again and what the broker deduplicated (PublisherResult.stream). */
  readonly dedupCounts: boolean;
  /** compare's flags that do not go with it, each with why. */
  readonly refusesFlags: Readonly<Partial<Record<'--urls' | '--exchange', string>>>;
}

const PROTOCOL_TRAITS = {
  amqp091: {
    name: 'AMQP 0-9-1',
    brokerFeature: null,
    publishModes: AMQP091_MODES,
    labelPrefix: '',
    multipleAcks: true,
    prefetchBoundsAutoAck: false,
    outcomeCounts: false,
    onlyQueueType: null,
    dedupCounts: false,
    refusesFlags: {},
  },
  amqp10: {
    name: 'AMQP 1.0',
    brokerFeature: 'amqp10',
    publishModes: AMQP10_MODES,
    labelPrefix: '1.0 ',
    multipleAcks: '--multi-ack-every is AMQP 0-9-1 (basic.ack multiple); an AMQP 1.0 consumer settles each transfer',
    prefetchBoundsAutoAck: true,
    outcomeCounts: true,
    onlyQueueType: null,
    dedupCounts: false,
    refusesFlags: {},
  },
  stream: {
    name: 'the native stream protocol',
    // The stream plugin the cluster enables (cluster/enabled_plugins), on every version it runs.
    brokerFeature: null,
    publishModes: ['async'],
    labelPrefix: 'stream ',
    multipleAcks: 'the native stream protocol publishes only (compare --queue-type stream)',
    prefetchBoundsAutoAck: false,
    outcomeCounts: false,
    onlyQueueType: 'stream',
    dedupCounts: true,
    refusesFlags: {
      '--urls': "it connects to the stream ports of this cluster's nodes",
      '--exchange': 'the native stream protocol publishes to the stream by name',
    },
  },
} as const satisfies { readonly [P in AnyProtocol]: ProtocolTraits };

/** Why a protocol does not go with a queue type (it publishes to one type only), or undefined. Pure. */
export function queueTypeProblem(protocol: AnyProtocol, queueType: QueueType): string | undefined {
  const only = PROTOCOL_TRAITS[protocol].onlyQueueType;
  return only === null || only === queueType
    ? undefined
    : `--protocol ${protocol} publishes over ${PROTOCOL_TRAITS[protocol].name}, to a ${only} only: give --queue-type ${only} (not ${queueType})`;
}

/** Why --confirms off does not go with a protocol (it has no unconfirmed publishing), or undefined. Pure. */
export function confirmsOffProblem(protocol: AnyProtocol): string | undefined {
  const { name, publishModes } = PROTOCOL_TRAITS[protocol];
  return (publishModes as readonly PublishMode[]).includes('none')
    ? undefined
    : `--confirms off does not go with --protocol ${protocol}: ${name} confirms every message (${publishModes.join(', ')})`;
}

export function traitsOf(protocol: AnyProtocol): ProtocolTraits {
  return PROTOCOL_TRAITS[protocol];
}
