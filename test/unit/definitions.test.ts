import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseDefinitions, quorumQueues, type Definitions } from '../../src/cluster/lifecycle/definitions.js';
import { DataError } from '../../src/errors.js';

const definitionsPath = fileURLToPath(new URL('../../cluster/definitions.json', import.meta.url));
const realText = readFileSync(definitionsPath, 'utf8');

function dataError(text: string): DataError {
  try {
    parseDefinitions(text, 'cluster/definitions.json');
  } catch (err) {
    expect(err).toBeInstanceOf(DataError);
    return err as DataError;
  }
  throw new Error('parseDefinitions accepted the input');
}

describe('parseDefinitions on cluster/definitions.json', () => {
  const defs = parseDefinitions(realText, definitionsPath);

  it('the dlx-orders policy dead-letters demo.orders to demo.dlx after 5 deliveries', () => {
    expect(defs.policies).toEqual([
      {
        vhost: '/',
        name: 'dlx-orders',
        pattern: '^demo\\.orders$',
        'apply-to': 'queues',
        priority: 2,
        definition: { 'dead-letter-exchange': 'demo.dlx', 'delivery-limit': 5 },
      },
    ]);
    const pattern = new RegExp(defs.policies[0]!.pattern);
    expect(pattern.test('demo.orders')).toBe(true);
    expect(pattern.test('demo.retry')).toBe(false);
    expect(pattern.test('demoXorders')).toBe(false);
  });

  it.each([
    { name: 'demo.orders', type: 'direct' },
    { name: 'demo.dlx', type: 'fanout' },
  ])('exchange $name is $type and durable', ({ name, type }) => {
    expect(defs.exchanges).toContainEqual(expect.objectContaining({ vhost: '/', name, type, durable: true }));
  });

  it('demo.orders is a durable quorum queue', () => {
    expect(defs.queues.find((q) => q.name === 'demo.orders')).toMatchObject({ vhost: '/', durable: true, arguments: { 'x-queue-type': 'quorum' } });
  });

  it('demo.retry waits 5 s, then dead-letters back to demo.orders through the default exchange', () => {
    expect(defs.queues.find((q) => q.name === 'demo.retry')?.arguments).toEqual({
      'x-queue-type': 'quorum',
      'x-message-ttl': 5000,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': 'demo.orders',
    });
  });

  it.each([
    { source: 'demo.orders', destination: 'demo.orders', routing_key: 'demo.orders' },
    { source: 'demo.dlx', destination: 'demo.retry', routing_key: '' },
  ])('binds exchange $source → queue $destination', ({ source, destination, routing_key }) => {
    expect(defs.bindings).toContainEqual(expect.objectContaining({ vhost: '/', source, destination, destination_type: 'queue', routing_key }));
  });

  it('user demo is an administrator', () => {
    expect(defs.users).toContainEqual(expect.objectContaining({ name: 'demo', tags: ['administrator'] }));
  });

  it('the / vhost defaults to quorum queues, and both demo queues are quorum queues', () => {
    expect(defs.vhosts.find((v) => v.name === '/')?.default_queue_type).toBe('quorum');
    expect(quorumQueues(defs)).toEqual([
      { vhost: '/', name: 'demo.orders' },
      { vhost: '/', name: 'demo.retry' },
    ]);
  });
});

describe('parseDefinitions on broken input', () => {
  const shapeCases: { name: string; text: string; message: string }[] = [
    { name: 'top-level array', text: '[]', message: 'cluster/definitions.json: the top level must be an object' },
    { name: 'top-level string', text: '"definitions"', message: 'cluster/definitions.json: the top level must be an object' },
    { name: 'top-level null', text: 'null', message: 'cluster/definitions.json: the top level must be an object' },
    { name: 'queues not an array', text: '{"queues": {"name": "demo.orders"}}', message: 'cluster/definitions.json: "queues" must be an array' },
    { name: 'a queue that is not an object', text: '{"queues": ["demo.orders"]}', message: 'cluster/definitions.json: queues[0] must be an object' },
    {
      name: 'a queue without name',
      text: '{"queues": [{"vhost": "/", "name": "demo.orders"}, {"vhost": "/", "durable": true}]}',
      message: 'cluster/definitions.json: queues[1].name must be a string',
    },
    {
      name: 'a binding without destination_type',
      text: '{"bindings": [{"vhost": "/", "source": "a", "destination": "b"}]}',
      message: 'cluster/definitions.json: bindings[0].destination_type must be a string',
    },
    {
      name: 'a policy without definition',
      text: '{"policies": [{"vhost": "/", "name": "p", "pattern": ".*"}]}',
      message: 'cluster/definitions.json: policies[0].definition must be an object',
    },
    {
      name: 'a policy with an invalid regex pattern',
      text: '{"policies": [{"vhost": "/", "name": "ok", "pattern": ".*", "definition": {}}, {"vhost": "/", "name": "dlx", "pattern": "^demo\\\\.(orders$", "definition": {}}]}',
      message: 'cluster/definitions.json: policies[1].pattern is not a valid regular expression',
    },
  ];

  it.each(shapeCases)('$name', ({ text, message }) => {
    const err = dataError(text);
    expect(err.message).toBe(message);
    expect(err.exitCode).toBe(65);
  });

  it('absent sections are empty', () => {
    expect(parseDefinitions('{}')).toEqual({ users: [], vhosts: [], policies: [], exchanges: [], queues: [], bindings: [] });
  });

  // Invalid JSON: the message names the file, the line and the column, on one line.
  const jsonCases: { name: string; text: string; where: string }[] = [
    { name: 'missing colon', text: '{\n  "users": [],\n  "queues" []\n}', where: 'line 3, column 12' },
    { name: 'trailing comma', text: '{\n  "users": [],\n}', where: 'line 3, column 1' },
    { name: 'two documents', text: '{}\n{}', where: 'line 2, column 1' },
    {
      name: 'the real file with a missing comma',
      text: realText.replace('"demo.dlx", "vhost"', '"demo.dlx" "vhost"'),
      where: `line ${lineOf(realText, '"demo.dlx", "vhost"')}, column `,
    },
    { name: 'an unquoted value', text: '{\n  "exchanges": [\n    { "name": "demo.orders", "type": direct }\n  ]\n}', where: 'line 3, column 38' },
    { name: 'input that ends inside an array', text: '{"users": [', where: 'line 1, column 12' },
    { name: 'a truncated file', text: realText.slice(0, realText.indexOf('"bindings"')), where: 'line ' },
  ];

  it.each(jsonCases)('invalid JSON, $name', ({ text, where }) => {
    const err = dataError(text);
    expect(err.message).toMatch(/^cluster\/definitions\.json is not valid JSON at line \d+, column \d+: /);
    expect(err.message).toContain(where);
    expect(err.message).not.toContain('\n');
    expect(err.exitCode).toBe(65);
  });
});

function lineOf(text: string, needle: string): number {
  return text.slice(0, text.indexOf(needle)).split('\n').length;
}

describe('quorumQueues', () => {
  const base: Definitions = { users: [], vhosts: [], policies: [], exchanges: [], queues: [], bindings: [] };
  const cases: { name: string; vhosts: Definitions['vhosts']; queues: Definitions['queues']; expected: string[] }[] = [
    {
      name: 'explicit x-queue-type quorum',
      vhosts: [{ name: '/' }],
      queues: [{ vhost: '/', name: 'q1', arguments: { 'x-queue-type': 'quorum' } }],
      expected: ['q1'],
    },
    {
      name: 'vhost default_queue_type quorum, no argument',
      vhosts: [{ name: '/', default_queue_type: 'quorum' }],
      queues: [
        { vhost: '/', name: 'q1' },
        { vhost: '/', name: 'q2', arguments: {} },
      ],
      expected: ['q1', 'q2'],
    },
    {
      name: 'vhost metadata.default_queue_type quorum',
      vhosts: [{ name: 'bench', metadata: { default_queue_type: 'quorum' } }],
      queues: [{ vhost: 'bench', name: 'q1' }],
      expected: ['q1'],
    },
    {
      name: 'explicit classic wins over a quorum vhost default',
      vhosts: [{ name: '/', default_queue_type: 'quorum' }],
      queues: [
        { vhost: '/', name: 'legacy', arguments: { 'x-queue-type': 'classic' } },
        { vhost: '/', name: 'q1' },
      ],
      expected: ['q1'],
    },
    {
      name: 'stream is not quorum',
      vhosts: [{ name: '/', default_queue_type: 'quorum' }],
      queues: [{ vhost: '/', name: 's', arguments: { 'x-queue-type': 'stream' } }],
      expected: [],
    },
    {
      name: 'classic vhost default, no argument',
      vhosts: [{ name: '/', default_queue_type: 'classic' }],
      queues: [{ vhost: '/', name: 'q1' }],
      expected: [],
    },
    {
      name: 'the default of another vhost does not apply',
      vhosts: [{ name: 'other', default_queue_type: 'quorum' }, { name: '/' }],
      queues: [{ vhost: '/', name: 'q1' }],
      expected: [],
    },
    { name: 'queue in an undeclared vhost', vhosts: [], queues: [{ vhost: '/', name: 'q1' }], expected: [] },
  ];

  it.each(cases)('$name', ({ vhosts, queues, expected }) => {
    expect(quorumQueues({ ...base, vhosts, queues }).map((q) => q.name)).toEqual(expected);
  });
});
