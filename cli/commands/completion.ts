import { Argument, type Command } from "commander";
import { usageError } from "../errors";

interface Node {
  path: string;
  commands: { name: string; description: string }[];
  flags: { flag: string; description: string }[];
}

/** Walks the commander tree: for every command path, its subcommands and its flags. */
export function commandTree(program: Command): Node[] {
  const nodes: Node[] = [];
  const visit = (cmd: Command, path: string[]) => {
    const subs = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
    const flags = cmd.options
      .filter((o) => !o.hidden)
      .flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)).map((flag) => ({ flag, description: o.description })));
    flags.push({ flag: "--help", description: "show help" });
    nodes.push({ path: path.join(" "), commands: subs.map((c) => ({ name: c.name(), description: c.description() })), flags });
    for (const c of subs) visit(c, [...path, c.name()]);
  };
  visit(program, []);
  return nodes;
}

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();

function caseFn(name: string, nodes: Node[], pick: (n: Node) => string[]) {
  const arms = nodes.map((n) => `    ${sq(n.path)}) printf '%s\\n' ${pick(n).map(sq).join(" ") || "''"} ;;`);
  return `${name}() {\n  case "$1" in\n${arms.join("\n")}\n  esac\n}`;
}

export function bashScript(nodes: Node[]) {
  return `# hookrelay completion for bash: source <(hookrelay completion bash)
${caseFn("_hookrelay_cmds", nodes, (n) => n.commands.map((c) => c.name))}
${caseFn("_hookrelay_flags", nodes, (n) => n.flags.map((f) => f.flag))}
_hookrelay() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmdpath="" w i
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    if _hookrelay_cmds "$cmdpath" | grep -qxF -- "$w"; then cmdpath="\${cmdpath:+$cmdpath }$w"; fi
  done
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$(_hookrelay_flags "$cmdpath")" -- "$cur") )
  else
    COMPREPLY=( $(compgen -W "$(_hookrelay_cmds "$cmdpath")" -- "$cur") )
  fi
}
complete -o default -F _hookrelay hookrelay
`;
}

export function zshScript(nodes: Node[]) {
  const esc = (s: string) => s.replace(/:/g, "\\:");
  return `#compdef hookrelay
# hookrelay completion for zsh: source <(hookrelay completion zsh), or save as _hookrelay in $fpath
${caseFn("_hookrelay_cmds", nodes, (n) => n.commands.map((c) => `${esc(c.name)}:${oneLine(c.description)}`))}
${caseFn("_hookrelay_flags", nodes, (n) => n.flags.map((f) => `${esc(f.flag)}:${oneLine(f.description)}`))}
_hookrelay() {
  local cmdpath="" w i
  local -a items names
  for ((i = 2; i < CURRENT; i++)); do
    w="\${words[i]}"
    [[ "$w" == -* ]] && continue
    names=(\${\${(f)"$(_hookrelay_cmds "$cmdpath")"}%%:*})
    if (( \${names[(Ie)$w]} )); then cmdpath="\${cmdpath:+$cmdpath }$w"; fi
  done
  if [[ "\${words[CURRENT]}" == -* ]]; then
    items=(\${(f)"$(_hookrelay_flags "$cmdpath")"})
    _describe -t flags 'flag' items
  else
    items=(\${(f)"$(_hookrelay_cmds "$cmdpath")"})
    (( \${#items} )) && _describe -t commands 'command' items || _files
  fi
}
compdef _hookrelay hookrelay
`;
}

export function fishScript(nodes: Node[]) {
  const lines = [
    "# hookrelay completion for fish: hookrelay completion fish | source",
    "function __hookrelay_cmds",
    "  switch $argv[1]",
    ...nodes.flatMap((n) => [`    case ${sq(n.path)}`, `      printf '%s\\n' ${n.commands.map((c) => sq(c.name)).join(" ") || "''"}`]),
    "  end",
    "end",
    "function __hookrelay_path_is",
    "  set -l words (commandline -opc)",
    "  set -e words[1]",
    "  set -l p ''",
    "  for w in $words",
    "    string match -q -- '-*' $w; and continue",
    "    if contains -- $w (__hookrelay_cmds $p)",
    "      set p (string trim -- \"$p $w\")",
    "    end",
    "  end",
    "  test \"$p\" = \"$argv[1]\"",
    "end",
    "complete -c hookrelay -f",
  ];
  for (const n of nodes) {
    const cond = `-n ${sq(`__hookrelay_path_is ${sq(n.path)}`)}`;
    for (const c of n.commands) lines.push(`complete -c hookrelay ${cond} -a ${sq(c.name)} -d ${sq(oneLine(c.description))}`);
    for (const f of n.flags) {
      const flag = f.flag.startsWith("--") ? `-l ${sq(f.flag.slice(2))}` : `-s ${sq(f.flag.slice(1))}`;
      lines.push(`complete -c hookrelay ${cond} ${flag} -d ${sq(oneLine(f.description))}`);
    }
  }
  return lines.join("\n") + "\n";
}

/** `hookrelay completion bash|zsh|fish`. */
export function registerCompletion(program: Command) {
  program
    .command("completion")
    .description("Print a shell completion script (nouns, verbs and flags)")
    .addArgument(new Argument("<shell>", "the shell").choices(["bash", "zsh", "fish"]))
    .addHelpText(
      "after",
      "\nExamples:\n  $ hookrelay completion bash > ~/.local/share/bash-completion/completions/hookrelay\n  $ source <(hookrelay completion bash)          # or in ~/.bashrc\n  $ hookrelay completion zsh > \"${fpath[1]}/_hookrelay\"\n  $ hookrelay completion fish > ~/.config/fish/completions/hookrelay.fish",
    )
    .action((shell: string) => {
      const nodes = commandTree(program);
      const script = shell === "bash" ? bashScript(nodes) : shell === "zsh" ? zshScript(nodes) : shell === "fish" ? fishScript(nodes) : null;
      if (!script) throw usageError(`unknown shell ${shell}`);
      process.stdout.write(script);
    });
}
