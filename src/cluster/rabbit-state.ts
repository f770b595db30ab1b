import type { NodeSpec } from '../config.js';
import type { Docker } from './engine.js';
import { callNode, type NodeCall } from './erl-call.js';

/**
 * A node's own word on its RabbitMQ application, asked inside its container (erl_call, a few
 * ms): running, booting, or stopped while its Erlang VM runs (a pause_minority pause, a start
 * that failed, `rabbitmqctl stop_app`). The management port cannot tell these apart: behind
 * docker's port proxy a node whose listener is down resets the connection, or never answers, and
 * a booting node does not answer either.
 */
export type RabbitState = 'running' | 'booting' | 'stopped';

const STATE_CALL: NodeCall = {
  expr: 'io:format("~p~n", [{rabbit:is_running(), rabbit:is_booting()}]), ok.',
  cli: ['rabbitmqctl', '-q', 'eval', '{rabbit:is_running(), rabbit:is_booting()}.'],
};

/** The state from what the call printed: `{true,false}`, `{false,true}`, `{false,false}`; undefined otherwise. Pure. */
export function parseRabbitState(printed: string): RabbitState | undefined {
  const m = /\{\s*(true|false)\s*,\s*(true|false)\s*\}/.exec(printed);
  if (!m) return undefined;
  if (m[1] === 'true') return 'running';
  return m[2] === 'true' ? 'booting' : 'stopped';
}

/** The node's state; undefined when its VM did not answer within 10 s (paused, down, its container stopped). */
export async function rabbitState(docker: Docker, node: NodeSpec): Promise<RabbitState | undefined> {
  try {
    return parseRabbitState(await callNode(docker, node.container, node.nodeName, STATE_CALL, 10_000));
  } catch {
    return undefined;
  }
}
