import { leaderOf, type QueueInfo } from '../../cluster/broker/snapshot.js';
import { auditedQueues, fail, pass, plural, warn, type AuditItem, type Check } from '../check.js';

/** The checks of each queue on its own: durability, type, replicas, backlog. */

export const queueDurable: Check = {
  id: 'queue-durable',
  title: 'queues survive a node restart',
  run: (_s, t) =>
    auditedQueues(t, { streams: true }).map(({ queue: q, object: obj }) =>
      q.durable === false
        ? fail(
            'queue-durable',
            obj,
            'transient: it and its messages are gone when its node restarts',
            'declare it durable (durability cannot be changed: create a durable queue, move the consumers, delete this one)',
          )
        : pass('queue-durable', obj, 'durable'),
    ),
};

export const queueType: Check = {
  id: 'queue-type',
  title: 'queues are replicated (quorum queues or streams)',
  run: (_s, t) =>
    auditedQueues(t, { streams: true }).map(({ eq, object: obj }) =>
      eq.type === 'classic'
        ? warn(
            'queue-type',
            obj,
            'classic queue: one copy, on one node; its messages are unavailable while that node is down and lost with its disk',
            "where the data matters, declare it as a quorum queue (x-queue-type: quorum; the vhost's default_queue_type can make that the default)",
          )
        : pass('queue-type', obj, `${eq.type} queue`),
    ),
};

function membersItem(q: QueueInfo, obj: string): AuditItem | undefined {
  const members = q.members ?? [];
  const online = q.online ?? [];
  if (members.length === 0) return undefined; // not reported yet (a queue declared a moment ago)
  const majority = Math.floor(members.length / 2) + 1;
  const leader = leaderOf(q);
  const state = `${online.length}/${members.length} members online`;
  if (!leader || online.length < majority) {
    return fail(
      'quorum-members',
      obj,
      `${state}${leader ? '' : ', no leader'}: the queue is unavailable (no majority)`,
      'bring the members’ nodes back (rmq-bench cluster status shows which are down)',
    );
  }
  if (online.length < members.length) {
    const off = members.filter((m) => !online.includes(m));
    return warn(
      'quorum-members',
      obj,
      `${state} (${off.join(', ')} offline): one more failure and it stops`,
      'bring the offline members’ nodes back; if a node is gone for good, rabbitmq-queues delete_member and add_member',
    );
  }
  if (members.length < 3) {
    return warn(
      'quorum-members',
      obj,
      `only ${plural(members.length, 'member')}: it survives no node failure`,
      'grow it to 3 members: rabbitmq-queues grow <node> all, or declare it with x-quorum-initial-group-size 3',
    );
  }
  return pass('quorum-members', obj, `${state}, leader ${leader}`);
}

export const quorumMembers: Check = {
  id: 'quorum-members',
  title: 'quorum queues have a leader, a majority online and at least 3 members',
  run: (_s, t) =>
    auditedQueues(t, { streams: false })
      .filter(({ eq }) => eq.type === 'quorum')
      .flatMap(({ queue: q, object: obj }) => membersItem(q, obj) ?? []),
};

export const dlqMessages: Check = {
  id: 'dlq-messages',
  title: 'dead-letter queues are empty',
  run: (_s, t) =>
    auditedQueues(t, { streams: false })
      .filter(({ role }) => role === 'dlq')
      .map(({ queue: q, object: obj }) => {
        const n = q.messages ?? 0;
        return n > 0
          ? warn(
              'dlq-messages',
              obj,
              `dead-letter queue holds ${plural(n, 'message')}: each one failed somewhere`,
              `look at them (rmq-bench dlq inspect --queue ${q.name}), fix the cause, then replay them (rmq-bench dlq replay --queue ${q.name}) or purge them`,
            )
          : pass('dlq-messages', obj, 'dead-letter queue is empty');
      }),
};

export const unacked: Check = {
  id: 'unacked',
  title: 'no queue holds many unacked messages',
  run: (_s, t, o) =>
    auditedQueues(t, { streams: false }).map(({ queue: q, object: obj }) => {
      const unackedCount = q.messages_unacknowledged ?? 0;
      return unackedCount >= o.maxUnacked
        ? warn(
            'unacked',
            obj,
            `${unackedCount} unacked messages (limit ${o.maxUnacked}): delivered but not yet acked; they are redelivered when their consumer's channel closes`,
            'check the consumers: ack each message once processed, and set a prefetch (basic.qos) so that none holds thousands',
          )
        : pass('unacked', obj, `${unackedCount} unacked`);
    }),
};

/**
 * A quorum queue's unacknowledged messages against what its consumers may hold: each consumer
 * that acks holds at most its prefetch (basic.qos; 0 is no limit). What is held beyond that is held
 * by a consumer that was cancelled (its channel must still ack or close), or for a channel that is
 * gone: rabbitmq-server #15473 saw it after a leader election, and rmq-bench's chaos on 5 nodes
 * after partitions. The queue's figures are its last statistics (every 5 s) while the consumer
 * list is read live, so a queue whose statistics count other consumers than the list is not judged:
 * a consumer came or went a moment ago. Only queues with unacknowledged messages are listed.
 */
export const unackedUnexplained: Check = {
  id: 'unacked-unexplained',
  title: "quorum queues hold no more unacked messages than their consumers' prefetch explains",
  run: (s, t) =>
    auditedQueues(t, { streams: false })
      .filter(({ eq, queue: q }) => eq.type === 'quorum' && (q.messages_unacknowledged ?? 0) > 0)
      .map(({ queue: q, object: obj }) => {
        const held = q.messages_unacknowledged!;
        const all = (s.consumers ?? []).filter((c) => c.queue.name === q.name && c.queue.vhost === q.vhost);
        if (q.consumers !== undefined && q.consumers !== all.length)
          return pass(
            'unacked-unexplained',
            obj,
            `${plural(held, 'unacked message')}; not judged: its statistics count ${plural(q.consumers, 'consumer')}, the broker lists ${all.length} now`,
          );
        const consumers = all.filter((c) => c.ack_required !== false);
        const unlimited = consumers.find((c) => !(typeof c.prefetch_count === 'number' && c.prefetch_count > 0));
        if (unlimited) return pass('unacked-unexplained', obj, `${plural(held, 'unacked message')}; consumer ${unlimited.consumer_tag} has no prefetch limit`);
        const may = consumers.reduce((sum, c) => sum + c.prefetch_count!, 0);
        if (held <= may)
          return pass(
            'unacked-unexplained',
            obj,
            `${plural(held, 'unacked message')}, within the prefetch of ${plural(consumers.length, 'consumer')} (${may})`,
          );
        const where = 'held by a cancelled consumer or for a channel that is gone';
        return warn(
          'unacked-unexplained',
          obj,
          consumers.length === 0
            ? `${plural(held, 'unacked message')} and no consumer: ${where}`
            : `${plural(held, 'unacked message')}, more than the prefetch of its ${plural(consumers.length, 'consumer')} allows (${may}): ${held - may} ${where}`,
          'find the channel that holds them (rabbitmqctl list_channels name messages_unacknowledged); a channel returns them by acking or closing. If none holds them, they are stuck: RabbitMQ delivers them to nobody (rabbitmq-server #15473)',
        );
      }),
};

export const noConsumers: Check = {
  id: 'no-consumers',
  title: 'work queues with ready messages have a consumer',
  run: (_s, t) =>
    auditedQueues(t, { streams: false })
      .filter(({ role }) => role === 'work')
      .map(({ queue: q, object: obj }) => {
        const consumers = q.consumers ?? 0;
        const ready = q.messages_ready ?? 0;
        return consumers === 0 && ready > 0
          ? warn(
              'no-consumers',
              obj,
              `${plural(ready, 'message')} ready and no consumer`,
              'start a consumer for this queue, or remove the queue if nothing reads it any more',
            )
          : pass('no-consumers', obj, consumers > 0 ? plural(consumers, 'consumer') : 'no consumer, and nothing waiting');
      }),
};

/** A stream's retention, from its arguments, else its policy: max-age, max-length-bytes. Pure. */
export function streamRetention(args: Record<string, unknown>, policy: Record<string, unknown>): string[] {
  const found: string[] = [];
  const age = args['x-max-age'] ?? policy['max-age'];
  const bytes = args['x-max-length-bytes'] ?? policy['max-length-bytes'];
  if (age !== undefined) found.push(`max-age ${String(age)}`);
  if (bytes !== undefined) found.push(`max-length-bytes ${String(bytes)}`);
  return found;
}

export const streamRetentionCheck: Check = {
  id: 'stream-retention',
  title: 'streams have a retention (max-age or max-length-bytes)',
  run: (_s, t) =>
    auditedQueues(t, { streams: true })
      .filter(({ eq }) => eq.type === 'stream')
      .map(({ eq, object: obj }) => {
        const retention = streamRetention(eq.queue.arguments ?? {}, eq.policy?.definition ?? {});
        return retention.length === 0
          ? warn(
              'stream-retention',
              obj,
              'a stream without max-age or max-length-bytes: reading never removes a message, so it keeps every one and grows until the disk alarm blocks every publisher',
              'set a retention: x-max-length-bytes or x-max-age when declaring it, or a policy with max-length-bytes or max-age (the broker then drops the oldest segments)',
            )
          : pass('stream-retention', obj, `retention: ${retention.join(', ')}`);
      }),
};
