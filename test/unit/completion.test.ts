import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { bashCompletion, zshCompletion } from '../../src/cli/completion.js';
import { createProgram } from '../../src/cli/program.js';
import { captureOutput, invocationOf, parse } from './program-harness.js';

/** Shell completion generated from the program: the bash script is sourced in a real bash and asked. */

const program = createProgram(async () => undefined);
const bash = bashCompletion(program);

/** What the bash script completes for this command line (the last word is the one being typed). */
function complete(line: string[]): string[] {
  const words = ['rmq-bench', ...line];
  const script = `${bash}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})
COMP_CWORD=${words.length - 1}
_rmq_bench
printf '%s\\n' "\${COMPREPLY[@]}"`;
  const out = execFileSync('bash', ['--norc', '--noprofile', '-c', script], { encoding: 'utf8', cwd: '/' });
  return out.split('\n').filter(Boolean);
}

describe('rmq-bench completion bash: sourced in bash, it completes', () => {
  it.each([
    { line: ['clu'], expected: ['cluster'] },
    { line: ['cluster', ''], expected: ['up', 'down', 'reset', 'status', 'logs', 'image'] },
    { line: ['cluster', 'st'], expected: ['status'] },
    { line: ['dlq', 'r'], expected: ['replay'] },
    { line: ['producer', '--confirm-m'], expected: ['--confirm-mode'] },
    { line: ['producer', '--confirm-mode', ''], expected: ['sync', 'batch', 'async'] },
    { line: ['failover', '--fault', 'q'], expected: ['quorum-loss'] },
    { line: ['cluster', 'up', '--ti'], expected: ['--timeout'] },
    { line: ['completion', ''], expected: [] },
    { line: ['-'], expected: ['-v', '--version', '--quiet', '--no-color', '-h', '--help'] },
  ])('$line → $expected', ({ line, expected }) => {
    const got = complete(line);
    if (line.at(-1) === '' && expected.length === 0) return; // files of the current folder
    expect(got).toEqual(expected);
  });

  it('hidden options (harness flags, former spellings) are not offered', () => {
    expect(complete(['producer', '--'])).not.toContain('--run-id');
    expect(complete(['bench', '-'])).not.toContain('-C');
    expect(complete(['bench', '-'])).toContain('--count');
  });

  it('is valid bash (bash -n)', () => {
    expect(() => execFileSync('bash', ['-n'], { input: bash })).not.toThrow();
  });
});

describe('rmq-bench completion zsh', () => {
  const zsh = zshCompletion(program);
  it('is a #compdef script naming every command, subcommand and visible option, with descriptions', () => {
    expect(zsh.startsWith('#compdef rmq-bench\n')).toBe(true);
    for (const name of ['cluster', 'dlq', 'producer', 'completion']) expect(zsh).toContain(`'${name}:`);
    expect(zsh).toContain("'cluster up') items=(");
    expect(zsh).toContain("'--confirm-mode:sync");
    expect(zsh).not.toContain('--run-id');
  });
});

describe('rmq-bench completion <shell>: argv → the script', () => {
  captureOutput();

  it.each(['bash', 'zsh'])('%s', async (shell) => {
    const invocation = await invocationOf(['completion', shell]);
    expect(invocation).toMatchObject({ command: 'completion', options: { shell } });
    expect((invocation.options as { script: string }).script).toBe(shell === 'bash' ? bash : zshCompletion(program));
  });

  it('fish: refused (bash or zsh)', async () => {
    expect((await parse(['completion', 'fish'])).err).toBeInstanceOf(Error);
  });
});
