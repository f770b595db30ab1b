import type { EffectiveQueue } from '../../cluster/broker/policy.js';
import { objectName } from '../../cluster/broker/snapshot.js';
import { auditedQueues, fail, pass, plural, type AuditItem, type Check } from '../check.js';

/** The checks of policies: keys that do nothing any more, and keys lost to a higher-priority policy. */

const HA_KEY = /^ha-/;

export const mirroringPolicy: Check = {
  id: 'mirroring-policy',
  title: 'no policy relies on classic queue mirroring (ha-*)',
  run: (s) => {
    const items: AuditItem[] = [];
    for (const p of s.policies) {
      const ha = Object.keys(p.definition).filter((k) => HA_KEY.test(k));
      if (ha.length > 0) {
        items.push(
          fail(
            'mirroring-policy',
            objectName('policy', p.vhost, p.name),
            `classic queue mirroring (${ha.join(', ')}): deprecated in 3.x and removed in RabbitMQ 4.0, where these keys do nothing; the queues it matches are not replicated`,
            'move the queues to quorum queues, then delete the ha-* keys (or the policy)',
          ),
        );
      }
    }
    if (items.length === 0)
      items.push(pass('mirroring-policy', 'policies', `no classic mirroring (ha-*) key in ${plural(s.policies.length, 'policy', 'policies')}`));
    return items;
  },
};

function shadowItem(eq: EffectiveQueue, obj: string): AuditItem {
  const winner = eq.policy!;
  const lost = eq.shadowed.map((p) => ({ p, keys: Object.keys(p.definition).filter((k) => !(k in winner.definition)) })).filter((x) => x.keys.length > 0);
  const by = `policy ${winner.name} (priority ${winner.priority ?? 0})`;
  if (lost.length === 0) {
    return pass('policy-shadowed', obj, `${by} applies and repeats the keys of ${eq.shadowed.map((p) => p.name).join(', ')}`);
  }
  const what = lost.map((x) => `${x.p.name} (priority ${x.p.priority ?? 0}) loses ${x.keys.join(', ')}`).join('; ');
  const repeat = lost.flatMap((x) => x.keys.map((k) => `${k}=${JSON.stringify(x.p.definition[k])}`));
  return fail(
    'policy-shadowed',
    obj,
    `only one policy applies to a queue: ${by} wins, so ${what}`,
    `repeat ${repeat.join(', ')} in policy ${winner.name}, or narrow its pattern so that it does not match this queue`,
  );
}

export const policyShadowed: Check = {
  id: 'policy-shadowed',
  title: 'no queue loses policy keys to a higher-priority policy',
  run: (_s, t) => {
    const queues = auditedQueues(t, { streams: false });
    // One item per queue matched by several policies; one for all when there is none.
    const items = queues.filter(({ eq }) => eq.shadowed.length > 0 && eq.policy).map(({ eq, object: obj }) => shadowItem(eq, obj));
    if (!queues.some(({ eq }) => eq.shadowed.length > 0)) items.push(pass('policy-shadowed', 'policies', 'no queue is matched by more than one policy'));
    return items;
  },
};
