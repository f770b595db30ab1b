import { EnvironmentError } from '../../errors.js';
import { execIn, type Docker } from '../docker/engine.js';

/**
 * One Erlang expression evaluated on a node, from inside its own container, through erl_call:
 * Erlang/OTP's small C client, which joins the node's distribution for one call. It costs a few
 * ms of CPU, where rabbitmqctl or rabbitmq-queues start a whole Erlang VM for the same call
 * (more than a second of CPU each). An image whose Erlang has no erl_call gets the command-line
 * tool instead (`cli`), which calls the same functions.
 */
export interface NodeCall {
  /** An Erlang expression, evaluated on the node; what it prints is the answer. Must end in `ok`. */
  expr: string;
  /** The rabbitmqctl or rabbitmq-queues command that does the same, for an image without erl_call. */
  cli: string[];
}

/**
 * Run in the container: finds erl_call beside the `erl` on the PATH (Debian's /usr/lib/erlang,
 * the official image's /opt/erlang; exit 127 when there is none), reads the node's own cookie
 * (the one it booted with), and evaluates $3 on node $1, waiting $2 s at most.
 */
export const ERL_CALL_SCRIPT = [
  'root=$(dirname "$(dirname "$(readlink -f "$(command -v erl)")")")',
  'bin=$(ls "$root"/erts-*/bin/erl_call "$root"/lib/erl_interface-*/bin/erl_call 2>/dev/null | head -n 1)',
  '[ -n "$bin" ] || exit 127',
  'printf "%s\\n" "$3" | exec "$bin" -n "$1" -c "$(cat /var/lib/rabbitmq/.erlang.cookie)" -timeout "$2" -fetch_stdout -e',
].join('\n');

/** The docker exec command line for one call. Pure. */
export function erlCallCommand(nodeName: string, expr: string, timeoutMs: number): string[] {
  return ['sh', '-c', ERL_CALL_SCRIPT, 'erl_call', nodeName, String(Math.max(1, Math.ceil(timeoutMs / 1000))), expr];
}

/** A string as an Erlang binary literal of its UTF-8 bytes: any queue name, nothing to escape. Pure. */
export function erlangBinary(text: string): string {
  return `<<${[...Buffer.from(text, 'utf8')].join(',')}>>`;
}

/**
 * erl_call -fetch_stdout -e prints what the expression printed, then its result: `{ok, ok}`
 * when it returned ok, `{error, "*** eval failed: ..."}` when it raised (exit code 0 either
 * way). Pure.
 */
export function parseErlCallOutput(output: string): { ok: true; printed: string } | { ok: false; reason: string } {
  const text = output.trimEnd();
  if (text.endsWith('{ok, ok}')) return { ok: true, printed: text.slice(0, -'{ok, ok}'.length) };
  const error = /\{error,\s*"((?:[^"\\]|\\.)*)"\}$/.exec(text);
  if (error) return { ok: false, reason: error[1]! };
  const last = text.split('\n').pop() ?? '';
  return { ok: false, reason: last === '' ? 'no answer' : last };
}

const lastLine = (text: string): string => text.trim().split('\n').pop() ?? '';

/**
 * Evaluate call.expr on nodeName (the node of `container`) and return what it printed; an image
 * without erl_call runs call.cli instead and returns its output. EnvironmentError when the call
 * failed or the node did not answer within timeoutMs.
 */
export async function callNode(docker: Docker, container: string, nodeName: string, call: NodeCall, timeoutMs: number): Promise<string> {
  const r = await execIn(docker, container, erlCallCommand(nodeName, call.expr, timeoutMs), timeoutMs + 5_000);
  if (r.exitCode === 127) {
    const cli = await execIn(docker, container, call.cli, timeoutMs);
    if (cli.exitCode !== 0) throw new EnvironmentError(`${call.cli.join(' ')} on ${container} exited ${cli.exitCode}: ${lastLine(cli.output)}`);
    return cli.output;
  }
  if (r.exitCode !== 0) throw new EnvironmentError(`erl_call could not reach ${nodeName} in ${container} (exit ${r.exitCode}): ${lastLine(r.output)}`);
  const parsed = parseErlCallOutput(r.output);
  if (!parsed.ok) throw new EnvironmentError(`${call.expr} on ${nodeName} failed: ${parsed.reason}`);
  return parsed.printed;
}
