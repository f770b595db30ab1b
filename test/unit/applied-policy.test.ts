import { describe, expect, it } from 'vitest';
import { appliedPolicyCall, parseAppliedPolicy } from '../../src/cluster/broker/applied-policy.js';

describe('the policy a queue has in force, asked of its leader', () => {
  it.each([
    [
      'erl_call (the JSON, then nothing)',
      '{"policy":"p","delayed_retry":true,"effective":{"delayed-retry-type":"failed","delivery-limit":5}}',
      { policy: 'p', delayedRetry: true, effective: { 'delayed-retry-type': 'failed', 'delivery-limit': 5 } },
    ],
    ['no policy', '{"policy":null,"delayed_retry":false,"effective":{}}', { policy: null, delayedRetry: false, effective: {} }],
    [
      'rabbitmqctl eval (its result after the JSON)',
      '{"policy":"p","delayed_retry":false,"effective":{}}ok\n',
      { policy: 'p', delayedRetry: false, effective: {} },
    ],
    ['an error', '{error, "*** eval failed: function_clause"}', undefined],
    ['nothing', '', undefined],
  ])('%s', (_name, text, expected) => expect(parseAppliedPolicy(text)).toEqual(expected));

  it('names the queue as Erlang binaries and queries the leader with an {M, F, A}', () => {
    const { expr, cli } = appliedPolicyCall({ vhost: '/', queue: 'q' });
    expect(expr).toContain('rabbit_misc:r(<<47>>, queue, <<113>>)');
    expect(expr).toContain('{rabbit_fifo, overview, []}');
    expect(expr.endsWith('ok.')).toBe(true);
    expect(cli).toEqual(['rabbitmqctl', 'eval', expr]);
  });
});
