import { describe, expect, it } from 'vitest';
import { type Checkpoint, checkpointEnv, fillCheckpoint } from '../../src/checkpoint.js';
import { commandCheckpoint } from '../../src/cli/checkpoint-option.js';
import { EnvironmentError } from '../../src/errors.js';

const point: Checkpoint = { name: 'before-drain', queue: 'demo.orders', vhost: '/', mode: 'confirms-off', run: 2 };

describe('--checkpoint-cmd', () => {
  it.each([
    ['count {queue}', 'count demo.orders'],
    ['{checkpoint} {mode} {run} {vhost}', 'before-drain confirms-off 2 /'],
    ['{queue}{queue}', 'demo.ordersdemo.orders'],
    ['{node} {unknown} stays', '{node} {unknown} stays'],
  ])('fills %j', (command, filled) => expect(fillCheckpoint(command, point)).toBe(filled));

  it('sets the same values in the environment', () => {
    expect(checkpointEnv(point)).toEqual({
      RMQ_BENCH_CHECKPOINT: 'before-drain',
      RMQ_BENCH_CHECKPOINT_QUEUE: 'demo.orders',
      RMQ_BENCH_CHECKPOINT_VHOST: '/',
      RMQ_BENCH_CHECKPOINT_MODE: 'confirms-off',
      RMQ_BENCH_CHECKPOINT_RUN: '2',
    });
  });

  it("returns the command's output, which sees the variables", async () => {
    const out = await commandCheckpoint('echo "$RMQ_BENCH_CHECKPOINT $RMQ_BENCH_CHECKPOINT_QUEUE run {run}"')(point, new AbortController().signal);
    expect(out.trim()).toBe('before-drain demo.orders run 2');
  });

  it('a command that fails is an EnvironmentError with its last line, the password masked', async () => {
    const run = commandCheckpoint('echo first; echo "amqp://demo:s3cret@h:5672 gone" >&2; exit 3');
    const err = await run(point, new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EnvironmentError);
    expect((err as Error).message).toMatch(/^--checkpoint-cmd '.*' at before-drain failed \(exit 3\): amqp:\/\/demo:\*\*\*@h:5672 gone$/);
    expect((err as Error).message).not.toContain('s3cret');
  });
});
