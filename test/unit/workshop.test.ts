import { describe, expect, it } from 'vitest';
import { joinContinuations, parseWorkshop, replaceOutputs, splitArgs } from '../../scripts/workshop.mjs';

const doc = [
  '# Workshop',
  '## 1. Durability',
  'Some words.',
  '```sh',
  '$ npx rmq-bench durability-demo -n 100',
  '```',
  '',
  '```text',
  'old output',
  '```',
  '## 2. Confirms',
  '```sh',
  '$ rmq-bench compare --fault "kill"',
  '$ rmq-bench cluster status',
  '```',
  'no output block here',
].join('\n');

describe('parseWorkshop', () => {
  it('finds each command with its section and the output block after it', () => {
    const b = parseWorkshop(doc);
    expect(b).toHaveLength(2);
    expect(b[0]!.commands).toEqual([{ line: 5, section: '1. Durability', args: ['durability-demo', '-n', '100'] }]);
    expect(b[0]!.output).toEqual({ start: 8, end: 10 });
    expect(b[1]!.commands.map((c) => c.args)).toEqual([
      ['compare', '--fault', 'kill'],
      ['cluster', 'status'],
    ]);
    expect(b[1]!.output).toBeUndefined();
  });
  it('a command split with backslashes is one command, at the line it starts on', () => {
    const split = ['```sh', '$ npx rmq-bench compare --fault kill \\', '    --confirms on \\', '    -n 100', '$ rmq-bench cluster status', '```'].join('\n');
    expect(parseWorkshop(split)[0]!.commands).toEqual([
      { line: 2, section: '', args: ['compare', '--fault', 'kill', '--confirms', 'on', '-n', '100'] },
      { line: 5, section: '', args: ['cluster', 'status'] },
    ]);
    expect(() => parseWorkshop('```sh\n$ docker \\\n  ps\n```')).toThrow(/line 2: only rmq-bench commands can be run by the workshop test: \$ docker ps$/);
  });
  it.each<{ name: string; lines: string[]; expected: { line: number; text: string }[] }>([
    {
      name: 'no backslash: a line each, trimmed',
      lines: ['  a', 'b  '],
      expected: [
        { line: 10, text: 'a' },
        { line: 11, text: 'b' },
      ],
    },
    { name: 'joined with one space', lines: ['a \\', '   b \\', ' c'], expected: [{ line: 10, text: 'a b c' }] },
    { name: 'a backslash on the last line: what it has', lines: ['a \\'], expected: [{ line: 10, text: 'a' }] },
    { name: 'a backslash inside a line is kept', lines: ['a\\b'], expected: [{ line: 10, text: 'a\\b' }] },
  ])('joinContinuations: $name', ({ lines, expected }) => {
    expect(joinContinuations(lines, 10)).toEqual(expected);
  });
  it('refuses a command it cannot run', () => {
    expect(() => parseWorkshop('```sh\n$ docker ps\n```')).toThrow(/only rmq-bench commands/);
  });
  it('replaces output blocks only', () => {
    const out = replaceOutputs(doc, new Map([[0, 'new line 1\nnew line 2\n']]));
    expect(out).toContain('```text\nnew line 1\nnew line 2\n```');
    expect(out).not.toContain('old output');
    expect(out.split('\n').slice(0, 7)).toEqual(doc.split('\n').slice(0, 7));
  });
  it('splits quoted arguments', () => {
    expect(splitArgs(`a "b c" 'd e' f`)).toEqual(['a', 'b c', 'd e', 'f']);
  });
});
