/**
 * A checkpoint: a moment of a run when the queue holds what the run is about to measure or has
 * just seen: before-drain (the producer done and the fault healed, before rmq-bench reads the
 * queue out), before-consume and after-consume (around a run's consumers), dead-lettered (a
 * reason's dead letters in the DLQ, left there). `--checkpoint-cmd` runs the user's own command there, so that the queue can be
 * counted or inspected with a tool that is not rmq-bench before rmq-bench reads it.
 */

const CHECKPOINT_NAMES = ['before-drain', 'before-consume', 'after-consume', 'dead-lettered'] as const;
type CheckpointName = (typeof CHECKPOINT_NAMES)[number];

export interface Checkpoint {
  readonly name: CheckpointName;
  readonly queue: string;
  readonly vhost: string;
  /** The run's mode (confirms-on, naive, autoack...). */
  readonly mode: string;
  /** 1-based, as in the report. */
  readonly run: number;
}

/** Runs the user's command at a checkpoint and returns what it printed (stdout and stderr). */
export type CheckpointRunner = (point: Checkpoint, signal: AbortSignal) => Promise<string>;

/** The environment a checkpoint command gets (besides the {placeholders} filled into it). */
export function checkpointEnv(point: Checkpoint): Record<string, string> {
  return {
    RMQ_BENCH_CHECKPOINT: point.name,
    RMQ_BENCH_CHECKPOINT_QUEUE: point.queue,
    RMQ_BENCH_CHECKPOINT_VHOST: point.vhost,
    RMQ_BENCH_CHECKPOINT_MODE: point.mode,
    RMQ_BENCH_CHECKPOINT_RUN: String(point.run),
  };
}

/** The command with {checkpoint}, {queue}, {vhost}, {mode} and {run} filled in. */
export function fillCheckpoint(command: string, point: Checkpoint): string {
  const values: Record<string, string> = { checkpoint: point.name, queue: point.queue, vhost: point.vhost, mode: point.mode, run: String(point.run) };
  return command.replace(/\{(checkpoint|queue|vhost|mode|run)\}/g, (_m, key: string) => values[key]!);
}
