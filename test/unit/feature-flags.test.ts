import { describe, expect, it } from 'vitest';
import { checkFeatureFlags } from '../../src/cluster/lifecycle/record.js';
import { nonVoterMembersWarning } from '../../src/cluster/lifecycle/up.js';
import { composeEnv, loadConfig, withCluster } from '../../src/config.js';
import { UsageError } from '../../src/errors.js';
import { flagsText } from '../../src/faults/applied.js';
import { type FeatureFlag, featureFlagsRefusal, flagsToEnable, parseFeatureFlags } from '../../src/faults/feature-flags.js';
import { oneShotProblem, REPEATABLE_FAULT_KINDS } from '../../src/faults/kinds.js';

/** `rabbitmqctl -q list_feature_flags name state stability --formatter json` on 4.0.5, booted with --feature-flags required (abridged). */
const LISTED_40 = `[
{"name":"classic_mirrored_queue_version","state":"enabled","stability":"required"}
,{"name":"detailed_queues_endpoint","state":"disabled","stability":"stable"}
,{"name":"khepri_db","state":"disabled","stability":"experimental"}
,{"name":"message_containers_deaths_v2","state":"disabled","stability":"stable"}
,{"name":"quorum_queue","state":"enabled","stability":"required"}
,{"name":"rabbitmq_4.0.0","state":"disabled","stability":"stable"}
]
`;

const flag = (name: string, state: string, stability: string): FeatureFlag => ({ name, state, stability });

describe('parseFeatureFlags: rabbitmqctl list_feature_flags as JSON', () => {
  it('reads every flag of the CLI output', () => {
    const flags = parseFeatureFlags(LISTED_40);
    expect(flags).toHaveLength(6);
    expect(flags[1]).toEqual(flag('detailed_queues_endpoint', 'disabled', 'stable'));
  });

  it.each([
    ['a line of the CLI before the list', `Listing feature flags ...\n${LISTED_40}`, 6],
    ['a flag without a stability: stable, the default', '[{"name":"quorum_queue","state":"enabled"}]', 1],
    ['no flag', '[]', 0],
  ])('%s', (_what, output, count) => {
    expect(parseFeatureFlags(output)).toHaveLength(count);
  });

  it.each([
    ['an error instead of a list', 'Error: unable to perform an operation on node', 'printed no JSON list: Error: unable'],
    ['a list cut short', '[{"name":"quorum_queue"', 'printed no JSON list'],
    ['a flag without a state', '[{"name":"quorum_queue"}]', 'printed a flag without a name or state'],
  ])('%s: an error quoting the output', (_what, output, message) => {
    expect(() => parseFeatureFlags(output)).toThrow(message);
  });
});

describe('flagsToEnable: every stable flag left disabled, what enable_feature_flag all enables', () => {
  it.each([
    ['4.0.5 booted with the required flags only', parseFeatureFlags(LISTED_40), ['detailed_queues_endpoint', 'message_containers_deaths_v2', 'rabbitmq_4.0.0']],
    ['an experimental flag stays off', [flag('khepri_db', 'disabled', 'experimental')], []],
    ['a flag being enabled is not enabled twice', [flag('b', 'state_changing', 'stable'), flag('a', 'disabled', 'stable')], ['a']],
    ['every stable flag enabled', [flag('a', 'enabled', 'stable'), flag('q', 'enabled', 'required')], []],
    ['sorted by name', [flag('z', 'disabled', 'stable'), flag('a', 'disabled', 'stable')], ['a', 'z']],
  ])('%s', (_what, flags, names) => {
    expect(flagsToEnable(flags)).toEqual(names);
  });
});

describe('featureFlagsRefusal: the one line when nothing is left to enable', () => {
  const required = flag('quorum_queue', 'enabled', 'required');
  it.each([
    ['a stable flag left disabled: none', [required, flag('rabbitmq_4.0.0', 'disabled', 'stable')], 'rmq-bench', undefined, undefined],
    [
      'every stable flag enabled: start it again',
      [required, flag('rabbitmq_4.0.0', 'enabled', 'stable')],
      'rmq-bench-h',
      'feature-flags: every stable feature flag is already enabled on rmq-bench-h; start it again with only the required ones',
      'rmq-bench cluster reset --hard --feature-flags required --name rmq-bench-h (its data is removed)',
    ],
    [
      'the default cluster: no --name in the hint',
      [required, flag('a', 'enabled', 'stable')],
      'rmq-bench',
      'feature-flags: every stable feature flag is already enabled on rmq-bench; start it again with only the required ones',
      'rmq-bench cluster reset --hard --feature-flags required (its data is removed)',
    ],
    [
      'only required and experimental flags: none can be left disabled',
      [required, flag('khepri_db', 'disabled', 'experimental')],
      'rmq-bench',
      'feature-flags: every feature flag of this broker is required or experimental: none can be left disabled to enable under traffic',
      undefined,
    ],
    [
      'no required flag (before 3.11): leaving flags off would take the quorum queues',
      [flag('quorum_queue', 'enabled', 'stable')],
      'rmq-bench',
      'feature-flags: this broker marks no feature flag required (RabbitMQ before 3.11), so none can be left disabled without losing what the cluster needs (quorum queues)',
      undefined,
    ],
  ])('%s', (_what, flags, cluster, message, hint) => {
    const r = featureFlagsRefusal(flags, cluster);
    expect(r?.message).toBe(message);
    expect(r?.hint).toBe(hint);
  });
});

describe('oneShotProblem: a fault applied once per cluster', () => {
  it.each([
    ['feature-flags once', 'feature-flags', 1, undefined],
    ['a fault that can be repeated', 'kill', 10, undefined],
    ['no fault', 'none', 10, undefined],
    [
      'feature-flags in two runs',
      'feature-flags',
      2,
      '--fault feature-flags changes the cluster for good and is applied once per cluster; --runs 1 of 2 sides would apply it 2 times (once: --runs 1 --confirms on)',
    ],
    [
      'feature-flags under chaos',
      'feature-flags',
      Number.POSITIVE_INFINITY,
      '--fault feature-flags changes the cluster for good and is applied once per cluster; --runs 1 of 2 sides would apply it again and again (once: --runs 1 --confirms on)',
    ],
  ] as const)('%s', (_what, fault, times, problem) => {
    expect(oneShotProblem(fault, times, '--runs 1 of 2 sides', 'once: --runs 1 --confirms on')).toBe(problem);
  });

  it("is not in chaos's default list", () => {
    expect(REPEATABLE_FAULT_KINDS).not.toContain('feature-flags');
    expect(REPEATABLE_FAULT_KINDS).toContain('kill');
  });
});

describe('checkFeatureFlags: the required flags alone only on a first boot', () => {
  it.each([
    ['stable on any cluster', { count: 3, featureFlags: undefined }, true, 'stable', false],
    ['required on a new cluster', { count: 0, featureFlags: undefined }, false, 'required', false],
    ['required on a cluster made with it', { count: 3, featureFlags: 'required' }, false, 'required', false],
    ['required on a cluster made with every stable flag', { count: 3, featureFlags: undefined }, false, 'required', true],
    ['required on the volumes a cluster down kept', { count: 0, featureFlags: undefined }, true, 'required', true],
  ] as const)('%s: refused %s', (_what, existing, volumesKept, wanted, refused) => {
    const call = () => checkFeatureFlags(existing, volumesKept, wanted, 'rmq-bench-h');
    if (refused) expect(call).toThrow(UsageError);
    else expect(call).not.toThrow();
  });

  it('says why, and how to get a fresh cluster', () => {
    expect(() => checkFeatureFlags({ count: 3, featureFlags: 'stable' }, false, 'required', 'rmq-bench-h')).toThrow(
      "feature flags are chosen on a node's first boot, and the cluster rmq-bench-h was made with every stable feature flag enabled: --feature-flags required changes nothing there",
    );
  });
});

describe('the feature flags setting: RMQ_BENCH_FEATURE_FLAGS, the record, --feature-flags', () => {
  it.each([
    [{}, 'stable'],
    [{ RMQ_BENCH_FEATURE_FLAGS: '' }, 'stable'],
    [{ RMQ_BENCH_FEATURE_FLAGS: 'required' }, 'required'],
  ])('%o → %s, passed to compose', (env, set) => {
    const c = loadConfig({ ...env, RMQ_BENCH_STATE_DIR: '/nonexistent' });
    expect(c.featureFlags).toBe(set);
    expect(composeEnv(c).RMQ_BENCH_FEATURE_FLAGS).toBe(set);
  });

  it('a value that is not a set is refused, naming the variable', () => {
    expect(() => loadConfig({ RMQ_BENCH_FEATURE_FLAGS: 'none' })).toThrow('RMQ_BENCH_FEATURE_FLAGS=none is not one of stable, required');
  });

  it('--feature-flags chooses it for the cluster', () => {
    const c = loadConfig({ RMQ_BENCH_STATE_DIR: '/nonexistent' });
    expect(withCluster(c, { featureFlags: 'required' }).featureFlags).toBe('required');
    expect(withCluster(c, { featureFlags: 'stable' })).toBe(c);
  });
});

describe('flagsText: what the fault reports of each flag', () => {
  it.each([
    [[{ name: 'a', ms: 707 }], 'a 707 ms'],
    [
      [
        { name: 'a', ms: 1_500 },
        { name: 'b', ms: 800, error: 'exited 1: timeout' },
      ],
      'a 1.50 s, b failed after 800 ms (exited 1: timeout)',
    ],
  ])('%o → %s', (flags, text) => {
    expect(flagsText(flags)).toBe(text);
  });
});

describe('nonVoterMembersWarning: where quorum_queue_non_voters is a stable flag left disabled', () => {
  it.each([
    ['3.10.8', false],
    ['4.0.5', true],
    ['4.2.1', true],
    ['4.3.6', false],
  ])('RabbitMQ %s: warned %s', (version, warned) => {
    const w = nonVoterMembersWarning(version);
    expect(w !== undefined).toBe(warned);
    if (warned) expect(w).toContain(`RabbitMQ ${version} made the members grown as the nodes joined`);
  });
});
