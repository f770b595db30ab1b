import type { requireBrokerFeature } from '../cluster/broker/broker-info.js';
import { type Protocol, traitsOf } from '../client/protocol.js';

/** Refuses (exit 69) a broker that lacks what one of `protocols` needs (AMQP 1.0: RabbitMQ 4); asked: the flag as given, for the message. */
export async function requireProtocols(ctx: Parameters<typeof requireBrokerFeature>[0], protocols: readonly Protocol[], asked: string): Promise<void> {
  for (const protocol of protocols) {
    const feature = traitsOf(protocol).brokerFeature;
    if (feature === null) continue;
    const { requireBrokerFeature } = await import('../cluster/broker/broker-info.js');
    await requireBrokerFeature(ctx, feature, asked);
  }
}
