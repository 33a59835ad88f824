// The import rules of docs/architecture.md, as code: folders form layers, each
// importing only what sits below it, with no cycle between files or folders.
// Checked by `npm test` (scripts/check-architecture.sh) before any test runs.

/**
 * Bottom to top. A folder may import itself and any folder earlier in this
 * list, never a later one; that order alone rules out a cycle between folders.
 * Folders in one inner list are peers that must not import each other.
 */
const LAYERS = [
  // core: no database, no use-case
  "src/generated",
  "src/contracts",
  "src/config",
  "src/observability",
  "src/core",
  "src/rules",
  "src/outgoing",
  // store
  "src/db",
  // domain: the use-cases
  "src/domain",
  // how this process runs among others
  "src/cluster",
  "src/live",
  "src/runtime",
  // workers
  ["src/ingest", "src/delivery", "src/alerts", "src/outbound", "src/catalog"],
  // edges
  "src/api",
  // composition roots
  "src/boot",
  "src/server.ts",
  "cli",
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const pathOf = (folder) => (folder.endsWith(".ts") ? `^${escape(folder)}$` : `^${escape(folder)}/`);

const upward = [];
LAYERS.forEach((layer, i) => {
  const here = [layer].flat();
  const above = LAYERS.slice(i + 1).flat();
  for (const folder of here) {
    if (above.length > 0) {
      upward.push({
        name: `layer:${folder}`,
        comment: `${folder} may import only the layers below it (docs/architecture.md)`,
        severity: "error",
        from: { path: pathOf(folder) },
        to: { path: above.map(pathOf) },
      });
    }
    const peers = here.filter((p) => p !== folder);
    if (peers.length > 0) {
      upward.push({
        name: `peers:${folder}`,
        comment: "a worker never imports another worker: what two share moves down into domain or core",
        severity: "error",
        from: { path: pathOf(folder) },
        to: { path: peers.map(pathOf) },
      });
    }
  }
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "no cycle between files",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: "dialects-apart",
      comment: "the two dialects' folders are symmetric and never import each other",
      severity: "error",
      from: { path: "^src/db/sqlite/" },
      to: { path: "^src/db/pg/" },
    },
    {
      name: "dialects-apart-pg",
      comment: "the two dialects' folders are symmetric and never import each other",
      severity: "error",
      from: { path: "^src/db/pg/" },
      to: { path: "^src/db/sqlite/" },
    },
    {
      name: "server-not-cli",
      comment: "src/ is the server runtime: it never imports cli/, react or ink",
      severity: "error",
      from: { path: "^src/" },
      to: { path: ["^cli/", "node_modules/(react|react-dom|ink)/"] },
    },
    {
      name: "cli-not-api",
      comment: "the CLI reaches the API over HTTP or the domain in local mode, never the hono app",
      severity: "error",
      from: { path: "^cli/" },
      to: { path: "^src/api/" },
    },
    {
      name: "ui-contracts-only",
      comment: "the admin UI talks to /v1 and shares only the contracts' types",
      severity: "error",
      from: { path: "^ui/" },
      to: { path: "^(src/(?!contracts/)|cli/)" },
    },
  ],
  options: {
    // TypeScript 7 has no JavaScript API for dependency-cruiser to parse with; swc reads TypeScript alone.
    parser: "swc",
    // swc reads `import type` too, so type-only imports count without tsc's
    // pre-compilation pass: a cycle of types is still a cycle for a reader.
    tsPreCompilationDeps: false,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^src/generated/" },
    tsConfig: { fileName: "tsconfig.json" },
  },
};
