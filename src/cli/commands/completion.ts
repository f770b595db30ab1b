import { Argument, type Command } from 'commander';
import { defineCommand } from '../command.js';
import { completionScript, SHELLS, type Shell } from '../completion.js';

/** `rmq-bench completion bash|zsh`: a completion script for the shell, generated from this program's commands and options. */
interface CompletionCliOptions {
  shell: Shell;
  /** The script, generated when the command line was parsed (the whole program is known then). */
  script: string;
}

export const completion = defineCommand({
  name: 'completion',
  examples: ['completion bash', 'completion zsh'],
  register: (command, dispatch: (o: CompletionCliOptions) => Promise<void>) =>
    command
      .summary('print a bash or zsh completion script')
      .description(
        'print a shell completion script (commands, subcommands, options): source <(rmq-bench completion bash), or save it (bash: ~/.local/share/bash-completion/completions/rmq-bench; zsh: _rmq-bench in your $fpath)',
      )
      .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
      .action((shell: Shell, _o: object, cmd: Command) => {
        // The root program, with every command registered by now.
        let root = cmd;
        while (root.parent) root = root.parent;
        return dispatch({ shell, script: completionScript(shell, root) });
      }),
  async run(_ctx, o) {
    process.stdout.write(o.script);
  },
});
