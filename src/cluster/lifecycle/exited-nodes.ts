import { withDeadline } from '../../util/retry.js';
import type { Docker } from '../docker/engine.js';

/**
 * A node whose container exited while `cluster up` waited for it. RabbitMQ ends its VM when its
 * boot fails; on 3.10 that happens when a node gives up waiting for its peers' tables, or, under
 * load, after compose made every container again at once. Nothing starts it again (the compose
 * file has no restart policy, so that a fault's stop stays a stop): `cluster up` does, a few
 * times, and otherwise says at once why it exited instead of waiting out its deadline.
 */
export const STARTS_PER_NODE = 2;

interface ExitedPlan {
  /** Exited containers to start again now. */
  start: string[];
  /** An exited container already started STARTS_PER_NODE times: stop waiting, name it. */
  gaveUp: string | undefined;
}

/** Pure: which exited containers to start again, given how often each was started already. */
export function planExited(exited: readonly string[], startsSoFar: ReadonlyMap<string, number>, maxStarts = STARTS_PER_NODE): ExitedPlan {
  const gaveUp = exited.find((name) => (startsSoFar.get(name) ?? 0) >= maxStarts);
  return { start: gaveUp === undefined ? [...exited] : [], gaveUp };
}

/** Pure: the line of a node's last log lines that says why it stopped (the last error-like one, else the last line). */
export function exitReason(log: string): string | undefined {
  const lines = log
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const telling = /BOOT FAILED|error|timeout_waiting_for_tables|inconsistent_cluster|crash|exit/i;
  const line = [...lines].reverse().find((l) => telling.test(l)) ?? lines.at(-1);
  return line === undefined ? undefined : line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

/** Pure: docker's log stream of a container without a TTY, frames of an 8-byte header and a payload, as text. */
export function demuxLog(buf: Buffer): string {
  const parts: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length) {
    const size = buf.readUInt32BE(i + 4);
    parts.push(buf.subarray(i + 8, Math.min(buf.length, i + 8 + size)));
    i += 8 + size;
  }
  // A container with a TTY sends its log as it is, without frames.
  return i === buf.length && parts.length > 0 ? Buffer.concat(parts).toString('utf8') : buf.toString('utf8');
}

/** Why a container exited: its exit code and the telling line of its last 40 log lines (10 s at most; then unknown). */
export async function whyExited(docker: Docker, container: string): Promise<string> {
  return withDeadline(() => readWhyExited(docker, container), 10_000, `docker inspect and logs of ${container}`).catch(
    () => 'exit code ?: its log did not answer',
  );
}

async function readWhyExited(docker: Docker, container: string): Promise<string> {
  const c = docker.getContainer(container);
  const info = await c.inspect().catch(() => undefined);
  const code = info?.State.ExitCode;
  const log = await c
    .logs({ stdout: true, stderr: true, tail: 40, follow: false })
    .then((b) => demuxLog(Buffer.isBuffer(b) ? b : Buffer.from(String(b))))
    .catch(() => '');
  const reason = exitReason(log);
  return `exit code ${code ?? '?'}${reason ? `: ${reason}` : ''}`;
}
