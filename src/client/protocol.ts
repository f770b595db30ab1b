/** The two protocols rmq-bench speaks to RabbitMQ: AMQP 0-9-1 (amqplib) and AMQP 1.0 (rhea), RabbitMQ 4's own. No imports: the CLI declares --protocol with it. */
export const PROTOCOLS = ['amqp091', 'amqp10'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** One line each, for --help. */
export const PROTOCOL_DESCRIPTIONS: Readonly<Record<Protocol, string>> = {
  amqp091: 'AMQP 0-9-1 (amqplib): publisher confirms, basic.ack/nack/reject',
  amqp10: "AMQP 1.0 (rhea), RabbitMQ 4's native protocol: outcomes accepted/released/rejected/modified",
};

/** The publish modes AMQP 1.0 has: transfers settled on the broker's outcome (async: a window; sync: one at a time) or pre-settled (none). tx and batch are AMQP 0-9-1's. */
export const AMQP10_MODES = ['async', 'sync', 'none'] as const;
