import { type BrokerFeature, requireFeature } from '../../broker-versions.js';
import type { ManagementClient } from './management.js';

/** The broker a command ran against, as its management API reports it: named in every --json document. */
export interface BrokerInfo {
  /** RabbitMQ's version (rabbitmq_version: 4.3.6). */
  version: string;
  /** Erlang/OTP's (erlang_version), or null when the API does not say. */
  erlang: string | null;
}

/** Ask the management API (any node that answers) for the broker's version; throws when none answers. */
export async function readBrokerInfo(management: ManagementClient): Promise<BrokerInfo> {
  const o = (await management.request('GET', '/api/overview')) as { rabbitmq_version?: unknown; erlang_version?: unknown };
  if (typeof o.rabbitmq_version !== 'string') throw new Error('the management API did not name its RabbitMQ version');
  return { version: o.rabbitmq_version, erlang: typeof o.erlang_version === 'string' ? o.erlang_version : null };
}

/**
 * Refuse (exit 69, one line naming the version needed) what the broker's version lacks, before
 * anything is touched. A broker that does not answer is let through: the command's own first
 * contact reports that, as it does without this check.
 */
export async function requireBrokerFeature(ctx: { broker(): Promise<BrokerInfo | null> }, feature: BrokerFeature, asked?: string): Promise<void> {
  const broker = await ctx.broker();
  if (broker) requireFeature(broker.version, feature, asked);
}
