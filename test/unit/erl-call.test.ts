import { execa } from 'execa';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERL_CALL_SCRIPT, erlCallCommand, erlangBinary, parseErlCallOutput } from '../../src/cluster/broker/erl-call.js';
import { quorumStatusCall } from '../../src/cluster/broker/queue-leadership.js';

describe('erlangBinary: any string as the bytes of an Erlang binary', () => {
  it.each([
    ['demo.orders', '<<100,101,109,111,46,111,114,100,101,114,115>>'],
    ['/', '<<47>>'],
    ['', '<<>>'],
    // Quotes, backslashes and non-ASCII need no escaping: they are bytes like any other.
    ['a"b\\c', '<<97,34,98,92,99>>'],
    ['é', '<<195,169>>'],
  ])('%j → %s', (text, literal) => {
    expect(erlangBinary(text)).toBe(literal);
  });
});

describe('parseErlCallOutput: what erl_call -fetch_stdout -e printed, then its result', () => {
  it.each([
    { name: 'returned ok, printed nothing', output: '{ok, ok}', expected: { ok: true, printed: '' } },
    {
      name: 'returned ok after printing JSON',
      output: '[{"Node Name":"rabbit@rabbit1"}]{ok, ok}\n',
      expected: { ok: true, printed: '[{"Node Name":"rabbit@rabbit1"}]' },
    },
    { name: 'printed a term, returned ok', output: '{ok,180000}{ok, ok}', expected: { ok: true, printed: '{ok,180000}' } },
    { name: 'raised', output: '{error, "*** eval failed: undef"}', expected: { ok: false, reason: '*** eval failed: undef' } },
    {
      name: 'raised with quotes in the reason',
      output: '{error, "*** eval failed: {badmatch,\\"x\\"}"}',
      expected: { ok: false, reason: '*** eval failed: {badmatch,\\"x\\"}' },
    },
    { name: 'returned something else than ok', output: '{ok, {error,not_found}}', expected: { ok: false, reason: '{ok, {error,not_found}}' } },
    { name: 'printed nothing at all', output: '', expected: { ok: false, reason: 'no answer' } },
  ])('$name', ({ output, expected }) => {
    expect(parseErlCallOutput(output)).toEqual(expected);
  });
});

describe('erlCallCommand', () => {
  it('runs the script with the node, a whole number of seconds (at least 1) and the expression', () => {
    expect(erlCallCommand('rabbit@rabbit2', 'ok.', 15_000)).toEqual(['sh', '-c', ERL_CALL_SCRIPT, 'erl_call', 'rabbit@rabbit2', '15', 'ok.']);
    expect(erlCallCommand('rabbit@rabbit2', 'ok.', 200).at(5)).toBe('1');
    expect(erlCallCommand('rabbit@rabbit2', 'ok.', 1_500).at(5)).toBe('2');
  });

  it('exits 127 where there is no Erlang (the caller then runs the command-line tool)', async () => {
    // A PATH with the script's tools and no `erl` (even where this machine has one): no erl_call
    // is found, and the script says so with 127 before it reads any cookie.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-erl-call-'));
    try {
      for (const tool of ['dirname', 'readlink', 'ls', 'head', 'cat']) {
        const found = (await execa('sh', ['-c', `command -v ${tool}`])).stdout.trim();
        await symlink(found, path.join(dir, tool));
      }
      const [, ...args] = erlCallCommand('rabbit@nowhere', 'ok.', 1_000);
      const r = await execa('/bin/sh', args, { reject: false, env: { PATH: dir }, extendEnv: false });
      expect(r.exitCode, r.stderr).toBe(127);
      expect(r.stderr).toBe('');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('quorumStatusCall', () => {
  it('asks rabbit_quorum_queue:status for the vhost and the queue as byte binaries, and prints it as JSON', () => {
    const call = quorumStatusCall({ vhost: '/', queue: 'q"1' });
    expect(call.expr).toBe(
      'case rabbit_quorum_queue:status(<<47>>, <<113,34,49>>) of L when is_list(L) -> io:put_chars(rabbit_json:encode(L)); Error -> exit(Error) end.',
    );
    expect(call.cli).toEqual(['rabbitmq-queues', 'quorum_status', 'q"1', '--vhost', '/', '--formatter', 'json']);
  });
});
