import { type Config, DEFAULT_CLUSTER_NAME } from '../config.js';
import type { Docker } from '../cluster/docker/engine.js';
import { containerOf, ctl } from '../cluster/lifecycle/forgotten-nodes.js';
import { EnvironmentError, errorMessage } from '../errors.js';
import { type AppliedFault, appliedFault, type EnabledFlag, flagsText } from './applied.js';
import type { FaultSpec } from './spec.js';

/**
 * feature-flags: what ends every upgrade, under traffic. On a cluster whose nodes booted with only
 * the required feature flags (`cluster up --feature-flags required`), every stable flag left
 * disabled is enabled in turn with `rabbitmqctl enable_feature_flag <flag>` on the leader's node,
 * as an operator runs `rabbitmqctl enable_feature_flag all` after the last node is upgraded.
 * rabbitmq-server #17504 reports confirmed messages dropped by it. The fault records each flag
 * and how long its call took (the CLI's own start included). A flag is never disabled again:
 * the restore undoes nothing, and the fault can be applied once per cluster (kinds.ts, oneShot);
 * `cluster reset --hard --feature-flags required` makes the next such cluster.
 */
export const featureFlags: FaultSpec<'feature-flags'> = {
  kind: 'feature-flags',
  needs: { ctl: true },
  leader: 'stays',
  nodeDown: false,
  leftovers: [],
  color: '#a16207',
  check: checkFlagsLeftDisabled,
  apply: async (ctx, { node }) => {
    const docker = await ctx.docker();
    return { fault: await enableFlags(docker, containerOf(ctx.config, node)), alsoFaulted: [] };
  },
};

/** One feature flag as `rabbitmqctl list_feature_flags name state stability` reports it. */
export interface FeatureFlag {
  readonly name: string;
  /** enabled, disabled, or state_changing while it is being enabled. */
  readonly state: string;
  /** required, stable or experimental. */
  readonly stability: string;
}

const LIST_FLAGS = ['rabbitmqctl', '-q', 'list_feature_flags', 'name', 'state', 'stability', '--formatter', 'json'];

/**
 * The flags in `rabbitmqctl -q list_feature_flags name state stability --formatter json`: a JSON
 * array (one object a line), possibly after a line of the CLI's own. A flag without a stability
 * is stable (the broker's default). Throws, quoting the output, on anything else. Pure.
 */
export function parseFeatureFlags(output: string): FeatureFlag[] {
  const start = output.indexOf('[');
  const end = output.lastIndexOf(']');
  let rows: unknown;
  try {
    rows = start === -1 || end < start ? undefined : JSON.parse(output.slice(start, end + 1));
  } catch {
    rows = undefined;
  }
  if (!Array.isArray(rows)) throw new Error(`rabbitmqctl list_feature_flags printed no JSON list: ${output.trim().slice(0, 200)}`);
  return rows.map((r: { name?: unknown; state?: unknown; stability?: unknown }) => {
    if (typeof r?.name !== 'string' || typeof r.state !== 'string')
      throw new Error(`rabbitmqctl list_feature_flags printed a flag without a name or state: ${JSON.stringify(r)}`);
    return { name: r.name, state: r.state, stability: typeof r.stability === 'string' ? r.stability : 'stable' };
  });
}

/** The flags the fault enables: every stable one left disabled, by name (what `enable_feature_flag all` enables). Pure. */
export function flagsToEnable(flags: readonly FeatureFlag[]): string[] {
  return flags
    .filter((f) => f.stability === 'stable' && f.state === 'disabled')
    .map((f) => f.name)
    .sort();
}

/** Why the fault cannot run on a cluster with these flags, as one line and a hint; undefined when some flag is left to enable. Pure. */
export function featureFlagsRefusal(flags: readonly FeatureFlag[], clusterName: string): { message: string; hint?: string } | undefined {
  if (flagsToEnable(flags).length > 0) return undefined;
  if (!flags.some((f) => f.stability === 'required'))
    return {
      message:
        'feature-flags: this broker marks no feature flag required (RabbitMQ before 3.11), so none can be left disabled without losing what the cluster needs (quorum queues)',
    };
  if (!flags.some((f) => f.stability === 'stable'))
    return { message: 'feature-flags: every feature flag of this broker is required or experimental: none can be left disabled to enable under traffic' };
  return {
    message: `feature-flags: every stable feature flag is already enabled on ${clusterName}; start it again with only the required ones`,
    hint: `rmq-bench cluster reset --hard --feature-flags required${clusterName === DEFAULT_CLUSTER_NAME ? '' : ` --name ${clusterName}`} (its data is removed)`,
  };
}

/** Before a run: refused (exit 69) unless some stable flag is left disabled on the cluster. */
async function checkFlagsLeftDisabled({ docker, config }: { docker: Docker; config: Config }): Promise<void> {
  const flags = parseFeatureFlags(await ctl(docker, config.nodes[0]!.container, LIST_FLAGS));
  const refusal = featureFlagsRefusal(flags, config.clusterName);
  if (refusal) throw new EnvironmentError(refusal.message, refusal.hint ? { hint: refusal.hint } : {});
}

/**
 * Enable every stable flag left disabled, one call each, in `container`. Each call is tried even
 * when one before it failed; then every flag must read enabled, or the fault fails naming them.
 */
async function enableFlags(docker: Docker, container: string): Promise<AppliedFault> {
  const names = flagsToEnable(parseFeatureFlags(await ctl(docker, container, LIST_FLAGS)));
  if (names.length === 0) throw new EnvironmentError(`feature-flags: no stable feature flag is left disabled on ${container}: nothing to enable`);
  const issuedAt = performance.now();
  const enabled: EnabledFlag[] = [];
  for (const name of names) {
    const started = performance.now();
    try {
      await ctl(docker, container, ['rabbitmqctl', 'enable_feature_flag', name]);
      enabled.push({ name, ms: performance.now() - started });
    } catch (err) {
      enabled.push({ name, ms: performance.now() - started, error: errorMessage(err) });
    }
  }
  const fault = appliedFault('feature-flags', container, issuedAt, async () => {
    // A feature flag is never disabled again: nothing to undo.
  });
  const left = flagsToEnable(parseFeatureFlags(await ctl(docker, container, LIST_FLAGS)));
  if (enabled.some((f) => f.error !== undefined) || left.length > 0)
    throw new EnvironmentError(`feature-flags: ${flagsText(enabled)}${left.length > 0 ? `; still disabled: ${left.join(', ')}` : ''}`);
  return Object.assign(fault, { enabledFlags: enabled });
}
