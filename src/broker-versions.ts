import { EnvironmentError } from './errors.js';

/**
 * The RabbitMQ versions rmq-bench runs a cluster of, and what depends on a broker's version.
 *
 * A line is a release series (3.10, 4.0, 4.3): `cluster up --rabbitmq <line>` brings up a
 * cluster of it, with the image built from the Debian suite that ships it when no official image
 * is at hand. What a command may ask of a broker is decided by the version the broker itself
 * reports (the management API's overview), so that the same rules hold for a cluster that is not
 * rmq-bench's own. Adding a line: one entry in LINE_SPECS (the compiler then asks for it wherever
 * a line matters). Adding a version-gated feature: one entry in BROKER_FEATURES, and a
 * requireFeature call where it is used. Pure.
 */

export const RABBITMQ_LINES = ['3.10', '4.0', '4.3'] as const;
export type RabbitmqLine = (typeof RABBITMQ_LINES)[number];
export const DEFAULT_RABBITMQ_LINE: RabbitmqLine = '4.3';

interface LineSpec {
  /** The Debian suite whose rabbitmq-server package is of this line. */
  readonly debianSuite: string;
  /** The official image, used when it is on this machine or can be pulled. */
  readonly officialImage: string;
  /** The tag of the image rmq-bench builds from the Debian suite. */
  readonly builtImage: string;
  /** Erlang/OTP of the Debian suite (for people: the README's table). */
  readonly erlang: string;
}

export const LINE_SPECS: Record<RabbitmqLine, LineSpec> = {
  '3.10': { debianSuite: 'bookworm', officialImage: 'rabbitmq:3.10-management', builtImage: 'rmq-bench/rabbitmq:3.10', erlang: '25' },
  '4.0': { debianSuite: 'trixie', officialImage: 'rabbitmq:4.0-management', builtImage: 'rmq-bench/rabbitmq:4.0', erlang: '27' },
  '4.3': { debianSuite: 'sid', officialImage: 'rabbitmq:4.3-management', builtImage: 'rmq-bench/rabbitmq:4.3', erlang: '29' },
};

/** Why a line is refused, or undefined. Pure. */
export function lineProblem(value: string): string | undefined {
  return (RABBITMQ_LINES as readonly string[]).includes(value) ? undefined : `is not a RabbitMQ version rmq-bench runs (${RABBITMQ_LINES.join(', ')})`;
}

/** [major, minor, patch] of '3.10.8', '4.3.6', '4.0.5+1'; NaN parts for what is not a version. Pure. */
function parts(version: string): [number, number, number] {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : [Number.NaN, Number.NaN, Number.NaN];
}

/** Whether `version` is `min` or later ('4.3.6' >= '4.3'). False for what is not a version. Pure. */
export function versionAtLeast(version: string, min: string): boolean {
  const a = parts(version);
  const b = parts(min);
  for (let i = 0; i < 3; i++) {
    if (a[i]! > b[i]!) return true;
    if (a[i]! < b[i]!) return false;
    if (Number.isNaN(a[i]!)) return false;
  }
  return true;
}

/** The line a version belongs to ('3.10.8' → '3.10'), or undefined for one rmq-bench has no line of. Pure. */
export function lineOf(version: string): RabbitmqLine | undefined {
  const [major, minor] = parts(version);
  return RABBITMQ_LINES.find((l) => l === `${major}.${minor}`);
}

interface FeatureSpec {
  /** For people: what the feature is ("native delayed retry"). */
  readonly what: string;
  /** The first version that has it. */
  readonly since?: string;
  /** The first version that no longer has it. */
  readonly until?: string;
  /** Where the rule comes from, for the README and the refusal's hint. */
  readonly source: string;
}

/**
 * What depends on the broker's version, each with the release that brought or removed it. The
 * lines rmq-bench runs sit on either side of each boundary (3.10 before 4.0, 4.0 before 4.3).
 */
export const BROKER_FEATURES = {
  amqp10: { what: 'AMQP 1.0 as a core protocol (--protocol amqp10)', since: '4.0', source: 'RabbitMQ 4.0 release notes' },
  'delayed-retry': { what: "native delayed retry (the 'delayed-retry-*' policy keys)", since: '4.3', source: 'RabbitMQ 4.3.0 release notes' },
  'consumer-timeout-policy': {
    what: "a consumer timeout per queue (policy key 'consumer-timeout')",
    since: '3.11.15',
    source: 'RabbitMQ 3.11.15 release notes (rabbitmq-server #5437)',
  },
  'consumer-timeout-cancel': {
    what: 'a consumer timeout that cancels the consumer (basic.cancel) and keeps its channel open, where older versions close the channel',
    since: '4.3',
    source: 'RabbitMQ 4.3.0 release notes; 4.3.7 release notes (close_channel: the pre-4.3.0 behavior)',
  },
  'delivery-limit-default': {
    what: 'a default delivery limit of 20 on quorum queues',
    since: '4.0',
    source: 'RabbitMQ 4.0 release notes (rabbitmq-server #11937)',
  },
  'uncounted-returns': {
    what: 'explicit returns (nack with requeue) that do not count toward the delivery limit',
    since: '4.3',
    source: 'RabbitMQ 4.3.0 release notes (rabbitmq-server #13885)',
  },
  'mirrored-queues': {
    what: "classic mirrored queues (an 'ha-mode' policy)",
    until: '4.0',
    source: 'RabbitMQ 4.0 release notes: classic queue mirroring removed',
  },
  'required-feature-flags': {
    what: 'required feature flags (a node enables them itself, whatever RABBITMQ_FEATURE_FLAGS leaves out)',
    since: '3.11',
    source: 'RabbitMQ 3.11.0 release notes: required feature flags',
  },
  'partition-handling': {
    what: 'partition handling strategies (cluster_partition_handling)',
    until: '4.3',
    source: 'RabbitMQ 4.3.0 release notes: Mnesia and partition handling strategies removed',
  },
} as const satisfies Record<string, FeatureSpec>;
export type BrokerFeature = keyof typeof BROKER_FEATURES;

/** Whether a broker of `version` has the feature. Pure. */
export function hasFeature(version: string, feature: BrokerFeature): boolean {
  const f: FeatureSpec = BROKER_FEATURES[feature];
  return (f.since === undefined || versionAtLeast(version, f.since)) && (f.until === undefined || !versionAtLeast(version, f.until));
}

/** The versions that have it, for people: '4.3 or later', 'before 4.0'. Pure. */
export function featureRange(feature: BrokerFeature): string {
  const f: FeatureSpec = BROKER_FEATURES[feature];
  if (f.since !== undefined && f.until !== undefined) return `${f.since} to before ${f.until}`;
  return f.since !== undefined ? `${f.since} or later` : `before ${f.until}`;
}

/** The newest line of rmq-bench's that has the feature (for the hint). Pure. */
function lineWith(feature: BrokerFeature): RabbitmqLine | undefined {
  return [...RABBITMQ_LINES].reverse().find((l) => hasFeature(`${l}.0`, feature));
}

/**
 * Why a broker of `version` cannot do what was asked, as one line ("delayed retry needs RabbitMQ
 * 4.3 or later; this broker runs 4.0.5"), or undefined when it can. Pure.
 */
export function featureProblem(version: string, feature: BrokerFeature, asked?: string, whose = 'this broker runs'): string | undefined {
  if (hasFeature(version, feature)) return undefined;
  const f = BROKER_FEATURES[feature];
  return `${asked ?? f.what} needs RabbitMQ ${featureRange(feature)}; ${whose} ${version}`;
}

/**
 * Throw the refusal (exit 69, before anything is touched) when the broker lacks the feature; its
 * hint names where the rule comes from and the cluster of rmq-bench's that has it.
 */
export function requireFeature(version: string, feature: BrokerFeature, asked?: string, whose?: string): void {
  const problem = featureProblem(version, feature, asked, whose);
  if (problem === undefined) return;
  const line = lineWith(feature);
  const source = `see the ${BROKER_FEATURES[feature].source}`;
  throw new EnvironmentError(problem, {
    hint:
      line === undefined ? source : `${source}; a ${line} cluster beside this one: rmq-bench cluster up --rabbitmq ${line} --name <name> --amqp-port <port>`,
  });
}
