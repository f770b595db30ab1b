import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ALARM_COMMANDS, CONFIGURED_DISK_FREE_LIMIT, CONFIGURED_MEMORY_WATERMARK, parseAlarms, type RaisedAlarm } from '../../src/cluster/alarms.js';

describe('parseAlarms: rabbitmqctl eval rabbit_alarm:get_alarms().', () => {
  const cases: [string, string, RaisedAlarm[]][] = [
    ['no alarm', '[]\n', []],
    [
      'a memory alarm (1 MB watermark on rabbit1, RabbitMQ 4.3.6)',
      '[{{resource_limit,memory,rabbit@rabbit1},[]}]\n',
      [{ kind: 'memory', node: 'rabbit@rabbit1' }],
    ],
    [
      'two alarms on one line',
      '[{{resource_limit,disk,rabbit@rabbit1},[]},{{resource_limit,memory,rabbit@rabbit2},[]}]',
      [
        { kind: 'disk', node: 'rabbit@rabbit1' },
        { kind: 'memory', node: 'rabbit@rabbit2' },
      ],
    ],
    [
      // What 4.3.6 printed for a memory alarm on rabbit1 and a disk alarm on rabbit2: the list wraps.
      'two alarms as rabbitmqctl prints them, wrapped',
      '[{{resource_limit,memory,rabbit@rabbit1},[]},\n {{resource_limit,disk,rabbit@rabbit2},[]}]\n',
      [
        { kind: 'memory', node: 'rabbit@rabbit1' },
        { kind: 'disk', node: 'rabbit@rabbit2' },
      ],
    ],
    ["a node name Erlang quotes (a '-' in the host)", "[{{resource_limit,memory,'rabbit@my-host'},[]}]", [{ kind: 'memory', node: 'rabbit@my-host' }]],
    [
      'quoted and unquoted together, a dotted host',
      "[{{resource_limit,disk,'rabbit@my-host'},[]},\n {{resource_limit,memory,rabbit@host.example.com},[]}]",
      [
        { kind: 'disk', node: 'rabbit@my-host' },
        { kind: 'memory', node: 'rabbit@host.example.com' },
      ],
    ],
    ['an error, not a list of alarms', 'Error: unable to perform an operation on node rabbit@rabbit1.\n', []],
  ];
  it.each(cases)('%s', (_name, output, expected) => {
    expect(parseAlarms(output)).toEqual(expected);
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
    expect(conf.get('cluster_formation.peer_discovery_backend')).toBe('classic_config');
  });

  it("CONFIGURED_DISK_FREE_LIMIT is rabbitmq.conf's disk_free_limit.absolute, and the only disk_free_limit setting", () => {
    expect(CONFIGURED_DISK_FREE_LIMIT).toBe(conf.get('disk_free_limit.absolute'));
    expect([...conf.keys()].filter((k) => k.startsWith('disk_free_limit'))).toEqual(['disk_free_limit.absolute']);
  });

  it("rabbitmq.conf sets no memory watermark: RabbitMQ's default 0.6 is in force, and CONFIGURED_MEMORY_WATERMARK says so", () => {
    expect([...conf.keys()].filter((k) => k.startsWith('vm_memory_high_watermark'))).toEqual([]);
    expect(CONFIGURED_MEMORY_WATERMARK).toBe('0.6');
  });

  it('clearing runs rabbitmqctl with exactly those limits', () => {
    expect(ALARM_COMMANDS.memory.clear).toEqual(['rabbitmqctl', 'set_vm_memory_high_watermark', CONFIGURED_MEMORY_WATERMARK]);
    expect(ALARM_COMMANDS.disk.clear).toEqual(['rabbitmqctl', 'set_disk_free_limit', CONFIGURED_DISK_FREE_LIMIT]);
  });
});
