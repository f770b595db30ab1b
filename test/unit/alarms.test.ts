import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ALARM_COMMANDS,
  CONFIGURED_DISK_FREE_LIMIT,
  CONFIGURED_MEMORY_WATERMARK,
  parseAlarmsCheck,
  type RaisedAlarm,
} from '../../src/cluster/broker/alarms.js';

describe('parseAlarmsCheck: GET /api/health/checks/alarms', () => {
  const memory = { node: 'rabbit@rabbit1', resource: 'memory' };
  const failed = (alarms: unknown): unknown => ({ reason: 'There are alarms in effect in the cluster', status: 'failed', alarms });
  const cases: [string, unknown, RaisedAlarm[] | undefined][] = [
    ['no alarm (200)', { status: 'ok' }, []],
    // RabbitMQ 4.3.6's answers, as read with curl: 1 MB watermark on rabbit1; disk_free_limit 1000000GB on rabbit2.
    ['a memory alarm (503)', failed([memory]), [{ kind: 'memory', node: 'rabbit@rabbit1' }]],
    ['a disk alarm: the resource is "disk space"', failed([{ node: 'rabbit@rabbit2', resource: 'disk space' }]), [{ kind: 'disk', node: 'rabbit@rabbit2' }]],
    [
      'two alarms on two nodes',
      failed([memory, { node: 'rabbit@rabbit2', resource: 'disk space' }]),
      [
        { kind: 'memory', node: 'rabbit@rabbit1' },
        { kind: 'disk', node: 'rabbit@rabbit2' },
      ],
    ],
    ['a resource this project does not raise is left out', failed([{ node: 'rabbit@rabbit1', resource: 'file descriptors' }]), []],
    ['a 503 that is not the check (a booting node): not an answer', { error: 'Service Unavailable' }, undefined],
    ['not JSON at all', undefined, undefined],
    ['a failed status without its list', { status: 'failed' }, undefined],
  ];
  it.each(cases)('%s', (_name, body, expected) => {
    expect(parseAlarmsCheck(body)).toEqual(expected);
  });
});

/** cluster/rabbitmq.conf's settings (key = value; # starts a comment line). */
function rabbitmqConf(): Map<string, string> {
  const text = readFileSync(fileURLToPath(new URL('../../cluster/rabbitmq.conf', import.meta.url)), 'utf8');
  const settings = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\s*([^#=\s][^=]*?)\s*=\s*(.*?)\s*$/.exec(line);
    if (m) settings.set(m[1]!, m[2]!);
  }
  return settings;
}

describe('the limits an alarm is reset to are the configuration this project runs with', () => {
  const conf = rabbitmqConf();

  it('reads cluster/rabbitmq.conf (the parser sees its settings)', () => {
    expect(conf.get('definitions.import_backend')).toBe('local_filesystem');
  });

  it("CONFIGURED_DISK_FREE_LIMIT is rabbitmq.conf's disk_free_limit.absolute, and the only disk_free_limit setting", () => {
    expect(CONFIGURED_DISK_FREE_LIMIT).toBe(conf.get('disk_free_limit.absolute'));
    expect([...conf.keys()].filter((k) => k.startsWith('disk_free_limit'))).toEqual(['disk_free_limit.absolute']);
  });

  it("rabbitmq.conf sets no memory watermark: RabbitMQ's default 0.6 is in force, and CONFIGURED_MEMORY_WATERMARK says so", () => {
    expect([...conf.keys()].filter((k) => k.startsWith('vm_memory_high_watermark'))).toEqual([]);
    expect(CONFIGURED_MEMORY_WATERMARK).toBe('0.6');
  });

  it('clearing sets exactly those limits, through erl_call and through rabbitmqctl alike', () => {
    expect(ALARM_COMMANDS.memory.clear).toEqual({
      expr: `ok = vm_memory_monitor:set_vm_memory_high_watermark(${CONFIGURED_MEMORY_WATERMARK}).`,
      cli: ['rabbitmqctl', 'set_vm_memory_high_watermark', CONFIGURED_MEMORY_WATERMARK],
    });
    expect(ALARM_COMMANDS.disk.clear).toEqual({
      expr: `ok = rabbit_disk_monitor:set_disk_free_limit("${CONFIGURED_DISK_FREE_LIMIT}").`,
      cli: ['rabbitmqctl', 'set_disk_free_limit', CONFIGURED_DISK_FREE_LIMIT],
    });
  });
});
