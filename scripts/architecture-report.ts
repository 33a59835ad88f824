// The measures of the tree's shape (docs/architecture.md): cycles between
// files and between folders, the largest files, lines of code.
// `bun scripts/architecture-report.ts` prints them; `npm run check:architecture`
// is the check that fails a build.
import { $ } from "bun";
import { readFileSync } from "node:fs";

interface Cruised {
  modules: { source: string; dependencies: { resolved: string; circular: boolean }[] }[];
  summary: { violations: { rule: { name: string }; from: string; to: string }[]; totalCruised: number };
}

const json = await $`bun --bun depcruise --config .dependency-cruiser.cjs --output-type json src cli ui/src`.nothrow().quiet().text();
const cruised = JSON.parse(json) as Cruised;

/** The part of the system a file belongs to: a folder of src/, or cli, or ui. */
const folderOf = (path: string): string | null => path.match(/^(src\/[^/.]+|src\/server\.ts|cli|ui)/)?.[1] ?? null;

const edges = new Map<string, Set<string>>();
for (const m of cruised.modules) {
  const from = folderOf(m.source);
  if (!from) continue;
  if (!edges.has(from)) edges.set(from, new Set());
  for (const d of m.dependencies) {
    const to = folderOf(d.resolved);
    if (to && to !== from) edges.get(from)!.add(to);
  }
}

/** Strongly connected components with more than one folder: each is a loop of folders. */
function folderLoops(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const loop: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        loop.push(w);
      } while (w !== v);
      if (loop.length > 1) loops.push(loop.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return loops;
}

const cycles = cruised.summary.violations.filter((v) => v.rule.name === "no-circular");
const otherViolations = cruised.summary.violations.filter((v) => v.rule.name !== "no-circular");
const loops = folderLoops(edges);

const files = (await $`git ls-files src cli ui/src scripts`.text())
  .split("\n")
  .filter((f) => /\.(ts|tsx)$/.test(f) && !f.startsWith("src/generated/"));
const sized = files.map((f) => ({ file: f, lines: readFileSync(f, "utf8").split("\n").length - 1 })).sort((a, b) => b.lines - a.lines);
const testFiles = (await $`git ls-files test`.text()).split("\n").filter((f) => /\.(ts|tsx)$/.test(f));
const testLines = testFiles.reduce((sum, f) => sum + readFileSync(f, "utf8").split("\n").length - 1, 0);

console.log(`modules cruised: ${cruised.summary.totalCruised}`);
console.log(`file cycles (edges in a cycle): ${cycles.length}${cycles.map((c) => `\n  ${c.from} -> ${c.to}`).join("")}`);
console.log(`folder loops: ${loops.length}${loops.map((l) => `\n  ${l.join(" ")}`).join("")}`);
console.log(`other rule violations: ${otherViolations.length}${otherViolations.map((v) => `\n  ${v.rule.name}: ${v.from} -> ${v.to}`).join("")}`);
console.log(`lines of code (src, cli, ui/src, scripts; not generated): ${sized.reduce((s, f) => s + f.lines, 0)} in ${sized.length} files; tests: ${testLines} in ${testFiles.length} files`);
console.log(`files over 400 lines: ${sized.filter((f) => f.lines > 400).length}`);
console.log("largest files:");
for (const f of sized.slice(0, 12)) console.log(`  ${String(f.lines).padStart(5)}  ${f.file}`);
