import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { bashScript, commandTree, fishScript, zshScript } from "../../cli/commands/completion";
import { walk } from "../../cli/commands/help";
import { Output } from "../../cli/output";
import { colorLevel } from "../../cli/output/color";
import { buildProgram } from "../../cli/program";
import { runsServe, serveProgram } from "../../cli/rootCommand";
import pkg from "../../package.json";
import { binarySchemaVersion, describeSchema } from "../../src/db/sqlite/schemaVersion";
import { cli, cliEnv } from "./helpers";

function helpText(cmd: Command) {
  let text = "";
  cmd.configureOutput({ writeOut: (s) => (text += s), writeErr: (s) => (text += s) });
  cmd.outputHelp();
  return text;
}

describe("help", () => {
  it("gives every command a description and an example", () => {
    const program = buildProgram();
    const all = walk(program).filter(({ cmd }) => cmd.name() !== "help" || cmd.parent === program);
    expect(all.length).toBeGreaterThan(5);
    for (const { path, cmd } of all) {
      expect(cmd.description(), path.join(" ")).not.toBe("");
      expect(helpText(cmd), path.join(" ")).toMatch(/Examples:\n {2}\$ hookrelay /);
    }
  });

  it("groups server and client commands in hookrelay --help", () => {
    const text = helpText(buildProgram());
    expect(text).toMatch(/Server:\n\s+serve/);
    expect(text).toMatch(/Client:\n\s+login/);
    expect(text.indexOf("Server:")).toBeLessThan(text.indexOf("Client:"));
  });

  it("documents the exit codes in `hookrelay help exit-codes`", async () => {
    const r = await cli(["help", "exit-codes"], { env: cliEnv() });
    expect(r.code).toBe(0);
    for (const line of [/0\s+ok/, /1\s+error/, /2\s+usage/, /4\s+auth/]) expect(r.stdout).toMatch(line);
  });
});

describe("serve's own program (cli/rootCommand.ts: serve loads no client command)", () => {
  const serveOf = (program: Command) => program.commands.find((c) => c.name() === "serve")!;

  it("is chosen only for serve itself, after any global flags and their values", () => {
    for (const argv of [["serve"], ["serve", "--help"], ["--data-dir", "d", "serve"], ["--data-dir=d", "--json", "serve", "--port", "0"], ["--url", "x", "--profile", "p", "serve"]]) {
      expect(runsServe(["bun", "hookrelay", ...argv]), argv.join(" ")).toBe(true);
    }
    for (const argv of [[], ["--help", "serve"], ["-h", "serve"], ["--version", "serve"], ["--bogus", "serve"], ["help", "serve"], ["keys", "list"], ["--data-dir", "serve"], ["--", "serve"]]) {
      expect(runsServe(["bun", "hookrelay", ...argv]), argv.join(" ")).toBe(false);
    }
  });

  it("gives serve the same help, options and root flags as the whole program", () => {
    const whole = buildProgram();
    const alone = serveProgram();
    expect(helpText(serveOf(alone))).toBe(helpText(serveOf(whole)));
    expect(alone.options.map((o) => o.flags)).toEqual(whole.options.map((o) => o.flags));
    expect(alone.version()).toBe(whole.version());
  });

  it("prints the same serve --help from the binary as the whole program does", async () => {
    const r = await cli(["--data-dir", "/nonexistent", "serve", "--help"], { env: cliEnv() });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(helpText(serveOf(buildProgram())));
  });
});

describe("--version", () => {
  it("prints the release and the schema its migrations make (what a backup or an upgrade is checked against)", async () => {
    const r = await cli(["--version"], { env: cliEnv() });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`hookrelay ${pkg.version}, schema ${describeSchema(binarySchemaVersion())}`);
    expect(r.stdout).toMatch(/schema \d+ \([0-9a-f]{12}\)/);
  });
});

describe("completion", () => {
  const nodes = commandTree(buildProgram());

  it("completes nouns, verbs and flags in bash", async () => {
    const script = bashScript(nodes);
    const probe = (words: string[]) =>
      `COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); _hookrelay; echo "${words.join(" ")}=>\${COMPREPLY[*]}"`;
    const test = [script, probe(["hookrelay", "ke"]), probe(["hookrelay", "keys", "cr"]), probe(["hookrelay", "--json", "keys", "create", "--na"]), probe(["hookrelay", "completion", ""])].join("\n");
    const proc = Bun.spawn(["bash", "-c", test], { stdout: "pipe", stderr: "pipe" });
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    expect(out).toContain("hookrelay ke=>keys");
    expect(out).toContain("hookrelay keys cr=>create");
    expect(out).toContain("hookrelay --json keys create --na=>--name");
  });

  it("prints zsh and fish scripts that know the same tree", () => {
    const zsh = zshScript(nodes);
    expect(zsh).toContain("#compdef hookrelay");
    expect(zsh).toMatch(/'keys'\) printf '%s\\n' 'create:Create an API key/);
    const fish = fishScript(nodes);
    expect(fish).toContain(`complete -c hookrelay -n '__hookrelay_path_is '\\''keys create'\\''' -l 'name'`);
  });
});

describe("output", () => {
  const capture = (tty: boolean) => {
    let text = "";
    return { stream: { isTTY: tty, write: (s: string) => (text += s) }, text: () => text };
  };
  const res = { things: [{ id: "src_1", name: "a\tb", status: "active", n: null }] };

  it("draws a coloured table on a terminal, plain without colour under NO_COLOR", () => {
    const prev = { NO_COLOR: process.env.NO_COLOR, FORCE_COLOR: process.env.FORCE_COLOR };
    try {
      delete process.env.NO_COLOR;
      delete process.env.FORCE_COLOR;
      const coloured = capture(true);
      new Output(false, coloured.stream, capture(true).stream).result(res, { list: "things", columns: ["id", "name", "status", "n"] });
      expect(coloured.text()).toMatch(/\u001b\[/);
      expect(coloured.text()).toContain("STATUS");

      process.env.NO_COLOR = "1";
      const plain = capture(true);
      new Output(false, plain.stream, capture(true).stream).result(res, { list: "things", columns: ["id", "name", "status", "n"] });
      expect(plain.text()).not.toMatch(/\u001b\[/);
      expect(plain.text().split("\n")[0]).toMatch(/^ID\s+NAME\s+STATUS\s+N$/);
    } finally {
      for (const [k, v] of Object.entries(prev)) v === undefined ? delete process.env[k] : (process.env[k] = v);
    }
  });

  it("prints tab-separated rows in a pipe and only the JSON with --json", () => {
    const pipe = capture(false);
    new Output(false, pipe.stream).result(res, { list: "things", columns: ["id", "name", "status", "n"] });
    expect(pipe.text()).toBe("src_1\ta\\tb\tactive\t\n");
    const json = capture(false);
    new Output(true, json.stream).result(res, { list: "things" });
    expect(JSON.parse(json.text())).toEqual(res);
  });

  it("decides colour from the stream, NO_COLOR and FORCE_COLOR", () => {
    expect(colorLevel({ isTTY: false }, {})).toBe(0);
    expect(colorLevel({ isTTY: true }, { TERM: "xterm" })).toBe(1);
    expect(colorLevel({ isTTY: true }, { NO_COLOR: "1" })).toBe(0);
    expect(colorLevel({ isTTY: false }, { FORCE_COLOR: "1" })).toBe(1);
    expect(colorLevel({ isTTY: true }, { TERM: "dumb" })).toBe(0);
  });
});
