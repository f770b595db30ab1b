import type { ClusterContext } from '../cluster-ctx.js';
import { errorMessage } from '../../errors.js';
import { callNode, erlangBinary, type NodeCall } from './erl-call.js';

/**
 * The policy a quorum queue has in force, asked of its leader itself (through erl_call), not of
 * the management API. The API's `policy` and `effective_policy_definition` come from the
 * statistics the leader emits on its tick (rabbit_quorum_queue:handle_tick), merged over every
 * node's copy. After a leader change they can lag: right after the leader is paused and
 * restored, the API can go on naming the queue's old policy for 10 to 50 s after a PUT while the
 * leader already has the new one in force (rmq-bench failover --fault pause, then
 * delayed-retry-demo, shows it). The leader's own config says whether delayed retry is on.
 */

interface AppliedPolicy {
  /** The policy's name in the queue's record, or null. */
  policy: string | null;
  /** The leader's state machine has a delayed-retry config (any type). */
  delayedRetry: boolean;
  /** The policy's effective definition (rabbit_policy:effective_definition). */
  effective: Record<string, unknown>;
}

/** The erl_call expression, and the rabbitmqctl eval that does the same. Pure. */
export function appliedPolicyCall(ref: { vhost: string; queue: string }): NodeCall {
  const expr =
    `{ok, Q} = rabbit_amqqueue:lookup(rabbit_misc:r(${erlangBinary(ref.vhost)}, queue, ${erlangBinary(ref.queue)})), ` +
    // A {M, F, A} query: a fun made by erl_call's evaluator is refused by ra (function_clause).
    '{ok, {_, O}, _} = ra:leader_query(amqqueue:get_pid(Q), {rabbit_fifo, overview, []}), ' +
    'io:put_chars(rabbit_json:encode(#{delayed_retry => maps:get(delayed_retry, maps:get(config, O), disabled) =/= disabled, ' +
    'policy => case rabbit_policy:name(Q) of none -> null; P -> P end, ' +
    'effective => maps:from_list(rabbit_policy:effective_definition(Q))})), ok.';
  return { expr, cli: ['rabbitmqctl', 'eval', expr] };
}

/** What the call printed (rabbitmqctl eval adds its result after the JSON). Pure; undefined when it is not that. */
export function parseAppliedPolicy(text: string): AppliedPolicy | undefined {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start === -1 || end < start) return undefined;
  for (let e = end; e > start; e = text.lastIndexOf('}', e - 1)) {
    try {
      const v = JSON.parse(text.slice(start, e + 1)) as Record<string, unknown>;
      if (typeof v.delayed_retry !== 'boolean') return undefined;
      const effective = typeof v.effective === 'object' && v.effective !== null ? (v.effective as Record<string, unknown>) : {};
      return { policy: typeof v.policy === 'string' ? v.policy : null, delayedRetry: v.delayed_retry, effective };
    } catch {
      // a shorter slice: rabbitmqctl's own output after the JSON
    }
  }
  return undefined;
}

/** Asked of our cluster's nodes in turn (the first that answers); undefined when none does. */
export async function askAppliedPolicy(ctx: ClusterContext, ref: { vhost: string; queue: string }): Promise<AppliedPolicy | undefined> {
  const docker = await ctx.docker();
  for (const node of ctx.config.nodes) {
    try {
      const parsed = parseAppliedPolicy(await callNode(docker, node.container, node.nodeName, appliedPolicyCall(ref), 10_000));
      if (parsed) return parsed;
    } catch (err) {
      ctx.log(`could not ask ${node.name} for the policy in force on ${ref.queue}: ${errorMessage(err)}`);
    }
  }
  return undefined;
}
