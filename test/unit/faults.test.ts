import { describe, expect, it } from 'vitest';
import { commandInjector, expandFaultCommand } from '../../src/faults/injector.js';
import { START_ATTEMPTS, startAgain } from '../../src/faults/kill.js';
import { PAUSE_ATTEMPTS, pauseWithRetry } from '../../src/faults/pause.js';
import { ManagementClient } from '../../src/cluster/broker/management.js';
import { heartbeatSeconds, maskCredentialsLoosely } from '../../src/cli/options.js';

describe('expandFaultCommand', () => {
  it.each([
    ['kubectl delete pod {host}', 'rabbit@rabbit-0.rabbit.ns', 'kill', 'kubectl delete pod rabbit-0.rabbit.ns'],
    ['ssh {host} sudo systemctl {fault} rabbitmq-server', 'rabbit@mq2', 'stop', 'ssh mq2 sudo systemctl stop rabbitmq-server'],
    ['echo {node} {node}', 'rabbit@a', 'pause', 'echo rabbit@a rabbit@a'],
    ['no placeholders', 'rabbit@a', 'kill', 'no placeholders'],
    ['docker kill {host}', 'bare-host', 'kill', 'docker kill bare-host'],
  ] as const)('%s with %s (%s)', (template, node, kind, expected) => {
    expect(expandFaultCommand(template, node, kind)).toBe(expected);
  });
});

describe('commandInjector', () => {
  it('runs the fault command, then the restore command once', async () => {
    const ran: string[] = [];
    const inj = commandInjector('kill {host}', 'start {host}', async (c) => void ran.push(c));
    const f = await inj.inject('rabbit@mq1', 'kill');
    expect(f.container).toBe('mq1');
    expect(f.restored).toBe(false);
    await f.restore();
    await f.restore();
    expect(ran).toEqual(['kill mq1', 'start mq1']);
    expect(f.restored).toBe(true);
  });

  it('without a restore command, restore runs nothing (the platform heals the node)', async () => {
    const ran: string[] = [];
    const f = await commandInjector('kill {host}', undefined, async (c) => void ran.push(c)).inject('rabbit@mq1', 'kill');
    await f.restore();
    expect(ran).toEqual(['kill mq1']);
  });

  it('a failing fault command rejects and applies nothing', async () => {
    const inj = commandInjector('boom', undefined, async () => {
      throw new Error('exit 1');
    });
    await expect(inj.inject('rabbit@x', 'kill')).rejects.toThrow('exit 1');
  });
});

describe('ManagementClient.fromUrls', () => {
  it('takes credentials from the first URL that has them and strips them from the endpoints', () => {
    const m = ManagementClient.fromUrls(['http://mq1:15672', 'http://u%40x:p%3Aw@mq2:15672/', 'http://other:o@mq3:15672'], 'demo', 'demo');
    expect(m.endpoints).toEqual([
      { node: 'mq1:15672', url: 'http://mq1:15672' },
      { node: 'mq2:15672', url: 'http://mq2:15672' },
      { node: 'mq3:15672', url: 'http://mq3:15672' },
    ]);
    expect(JSON.stringify(m.endpoints)).not.toContain('p%3Aw');
  });
});

describe('heartbeatSeconds', () => {
  it.each([
    [0, 0],
    [1, 1],
    [200, 1],
    [1000, 1],
    [1001, 2],
    [5000, 5],
  ])('%i ms → %i s', (ms, s) => expect(heartbeatSeconds(ms)).toBe(s));
});

describe('maskCredentialsLoosely', () => {
  it.each([
    ["argument 'amqp//u:secret@h' is invalid", "argument 'amqp//u:***@h' is invalid"],
    ["argument 'http://u:secret@h:15672' is invalid", "argument 'http://u:***@h:15672' is invalid"],
    ['no credentials here: a:b c', 'no credentials here: a:b c'],
  ])('%s', (input, expected) => expect(maskCredentialsLoosely(input)).toBe(expected));
});

/** A container whose pause and start fail with each of `failures` in turn, then succeed; it counts the calls. */
function container(failures: Error[]) {
  let calls = 0;
  const call = async () => {
    calls++;
    const e = failures.shift();
    if (e) throw e;
  };
  return {
    get calls() {
      return calls;
    },
    pause: call,
    start: call,
  };
}
const noSleep = async () => undefined;

describe('pauseWithRetry: the cgroup freezer that gives up under load', () => {
  const FREEZE = new Error('(HTTP code 500) server error - Cannot pause container x: OCI runtime pause failed: unable to freeze: unknown');

  it.each([
    { name: 'paused at once', failures: 0, calls: 1 },
    { name: 'paused on the third try', failures: 2, calls: 3 },
    { name: `paused on the last of ${PAUSE_ATTEMPTS} tries`, failures: PAUSE_ATTEMPTS - 1, calls: PAUSE_ATTEMPTS },
  ])('$name', async ({ failures, calls }) => {
    const c = container(Array.from({ length: failures }, () => FREEZE));
    await pauseWithRetry(c, noSleep);
    expect(c.calls).toBe(calls);
  });

  it(`gives up after ${PAUSE_ATTEMPTS} freeze failures, with the engine's error`, async () => {
    const c = container(Array.from({ length: PAUSE_ATTEMPTS + 2 }, () => FREEZE));
    await expect(pauseWithRetry(c, noSleep)).rejects.toThrow('unable to freeze');
    expect(c.calls).toBe(PAUSE_ATTEMPTS);
  });

  it('any other error at once (no such container, already paused)', async () => {
    const c = container([new Error('(HTTP code 409) Container x is already paused')]);
    await expect(pauseWithRetry(c, noSleep)).rejects.toThrow('already paused');
    expect(c.calls).toBe(1);
  });
});

describe('startAgain: a killed or stopped container started again', () => {
  const engineError = (statusCode: number, message: string) => Object.assign(new Error(message), { statusCode });
  const BUSY = engineError(
    500,
    '(HTTP code 500) server error - driver failed programming external connectivity: Bind for 127.0.0.1:5673 failed: port is already allocated',
  );

  it.each([
    { name: 'started at once', failures: [] as Error[], calls: 1 },
    { name: 'started on the third try after two engine errors', failures: [BUSY, BUSY], calls: 3 },
    { name: 'already started (304): done', failures: [engineError(304, '(HTTP code 304) container already started')], calls: 1 },
  ])('$name', async ({ failures, calls }) => {
    const c = container([...failures]);
    await startAgain(c, 'rabbit2', noSleep);
    expect(c.calls).toBe(calls);
  });

  it(`gives up after ${START_ATTEMPTS} engine errors, naming the container and every reason`, async () => {
    const c = container(Array.from({ length: START_ATTEMPTS + 2 }, () => BUSY));
    await expect(startAgain(c, 'rabbit2', noSleep)).rejects.toThrow(`could not start rabbit2 (${START_ATTEMPTS} attempts: `);
    expect(c.calls).toBe(START_ATTEMPTS);
  });

  it('any other error at once (404: no such container)', async () => {
    const c = container([engineError(404, '(HTTP code 404) no such container - rabbit9')]);
    await expect(startAgain(c, 'rabbit9', noSleep)).rejects.toThrow('no such container');
    expect(c.calls).toBe(1);
  });
});
