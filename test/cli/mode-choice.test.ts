import { describe, expect, it } from "vitest";
import { resolveTarget } from "../../cli/context/target";

/** Which store a client command works on: local mode on SQLite or PostgreSQL, or remote; conflicts are usage errors. */
describe("choosing local or remote mode", () => {
  const url = "postgres://hookrelay@db:5432/hookrelay";

  it("--database-url or HOOKRELAY_DATABASE_URL is local mode on PostgreSQL", () => {
    expect(resolveTarget({ databaseUrl: url }, {})).toEqual({ mode: "local", databaseUrl: url });
    expect(resolveTarget({}, { HOOKRELAY_DATABASE_URL: url })).toEqual({ mode: "local", databaseUrl: url });
  });

  it("--data-dir still takes HOOKRELAY_DATABASE_URL, as serve does", () => {
    expect(resolveTarget({ dataDir: "/srv/data" }, { HOOKRELAY_DATABASE_URL: url })).toEqual({ mode: "local", dataDir: "/srv/data", databaseUrl: url });
  });

  it("a local-mode flag with a remote-mode flag is a usage error", () => {
    expect(() => resolveTarget({ databaseUrl: url, url: "http://localhost:8080" }, {})).toThrow(/choose one mode/);
  });

  it("HOOKRELAY_DATABASE_URL and HOOKRELAY_URL set together need a flag to decide", () => {
    expect(() => resolveTarget({}, { HOOKRELAY_DATABASE_URL: url, HOOKRELAY_URL: "http://localhost:8080" })).toThrow(/pass --data-dir, --database-url or --url/);
    expect(resolveTarget({ url: "http://localhost:8080" }, { HOOKRELAY_DATABASE_URL: url })).toMatchObject({ mode: "remote" });
  });
});
