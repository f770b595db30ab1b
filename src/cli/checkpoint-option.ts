import { Option } from 'commander';
import { type CheckpointRunner, checkpointEnv, fillCheckpoint } from '../checkpoint.js';
import type { ContextOverrides } from '../context.js';
import { EnvironmentError, InterruptedError } from '../errors.js';
import { maskUrlsIn } from '../url.js';
import { loadExeca } from '../util/exec.js';

/**
 * --checkpoint-cmd: the user's own shell command at each checkpoint of a run (src/checkpoint.ts),
 * to count or inspect the queue with a tool that is not rmq-bench before rmq-bench reads it.
 * compare, producer-crash and consumer-crash take it.
 */

/**
 * How long a checkpoint command may run before it is stopped and the run fails: room for a
 * counter that waits out a cluster still settling after a heal, and peeks a deep queue.
 */
const CHECKPOINT_TIMEOUT_MS = 300_000;

export const checkpointCmdOption = (points: string): Option =>
  new Option(
    '--checkpoint-cmd <command>',
    `run this shell command ${points}, to look at the queue with your own tool first ({checkpoint}, {queue}, {vhost}, {mode}, {run} are filled in, and set as RMQ_BENCH_CHECKPOINT*), e.g. 'rabbitmqctl list_queues name messages'`,
  );

/** The runner behind --checkpoint-cmd: a non-zero exit (or 2 minutes) is an EnvironmentError with its last line. */
export function commandCheckpoint(command: string): CheckpointRunner {
  return async (point, signal) => {
    const execa = await loadExeca();
    const filled = fillCheckpoint(command, point);
    const r = await execa('sh', ['-c', filled], {
      reject: false,
      stdin: 'ignore',
      all: true,
      timeout: CHECKPOINT_TIMEOUT_MS,
      cancelSignal: signal,
      env: checkpointEnv(point),
    });
    if (signal.aborted) throw new InterruptedError();
    const output = String(r.all ?? '');
    if (r.exitCode !== 0) {
      const why = r.timedOut ? `no answer within ${CHECKPOINT_TIMEOUT_MS / 1000} s` : `exit ${r.exitCode ?? r.signal ?? '?'}`;
      const last = output.trim().split('\n').pop() ?? '';
      throw new EnvironmentError(`--checkpoint-cmd '${maskUrlsIn(filled)}' at ${point.name} failed (${why}): ${maskUrlsIn(last)}`);
    }
    return maskUrlsIn(output);
  };
}

/** The context's checkpoint runner, when --checkpoint-cmd was given. */
export function checkpointOverride(command: string | undefined): ContextOverrides {
  return command === undefined ? {} : { checkpoint: commandCheckpoint(command) };
}
