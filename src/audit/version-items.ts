import { hasFeature } from '../broker-versions.js';
import type { CheckId } from './check.js';

/**
 * What the broker's version changes in the checklist: for each check whose meaning depends on it,
 * the rule that holds on this version, as one sentence (with the command that measures it). The
 * audit prints them under its items, so that a reader knows which version's rules it checked
 * against. Pure; an unknown version reads as the newest line's rules.
 */
export interface VersionItem {
  check: CheckId;
  /** The feature the rule turns on (broker-versions.ts), for the JSON. */
  feature: string;
  says: string;
}

export function versionItems(version: string | undefined): VersionItem[] {
  const v = version ?? '99.0.0';
  const has = (f: Parameters<typeof hasFeature>[1]): boolean => hasFeature(v, f);
  return [
    {
      check: 'delivery-limit',
      feature: 'delivery-limit-default',
      says: has('delivery-limit-default')
        ? 'every quorum queue has a delivery limit of 20 unless one is set (-1 for none); past it a message is dead-lettered, or dropped without a DLX'
        : 'a quorum queue has no delivery limit unless one is set: a poison message is redelivered for ever',
    },
    {
      check: 'requeue-loop',
      feature: 'uncounted-returns',
      says: has('uncounted-returns')
        ? 'only a failed delivery counts toward the delivery limit: basic.nack with requeue (AMQP 1.0: released, modified without delivery-failed) never does, so such a requeue loops for ever (rmq-bench delivery-limit-demo)'
        : 'every return counts toward the delivery limit (basic.nack and basic.reject with requeue, a closed channel, AMQP 1.0 released and modified alike): a requeued poison message stops at the limit (rmq-bench delivery-limit-demo)',
    },
    {
      check: 'mirroring-policy',
      feature: 'mirrored-queues',
      says: has('mirrored-queues')
        ? 'ha-* policy keys mirror classic queues; a mirrored queue can lose confirmed messages when a partition heals (rmq-bench compare --queue-type mirrored --fault partition)'
        : 'ha-* policy keys do nothing: classic queues are not replicated (classic queue mirroring was removed in 4.0)',
    },
    {
      check: 'consumer-timeout',
      feature: has('consumer-timeout-cancel') ? 'consumer-timeout-cancel' : 'consumer-timeout-policy',
      says: has('consumer-timeout-cancel')
        ? 'a quorum queue cancels a consumer at its timeout (basic.cancel), the channel stays open; classic queues have no consumer timeout'
        : has('consumer-timeout-policy')
          ? 'a consumer past its timeout has its channel closed (PRECONDITION_FAILED) at a check once a minute: a timeout below a minute fires up to a minute late (rmq-bench consumer-timeout-demo)'
          : 'only the broker-wide consumer_timeout applies (a per-queue timeout arrived in 3.11.15), checked once a minute',
    },
    {
      check: 'partitions',
      feature: 'partition-handling',
      says: has('partition-handling')
        ? 'cluster_partition_handling decides what a partition does (default ignore: both sides go on, and the partition stays after the network is back until a node is restarted)'
        : 'the metadata store is Khepri (Raft): a partition ends when the network is back; cluster_partition_handling has no effect',
    },
  ];
}
