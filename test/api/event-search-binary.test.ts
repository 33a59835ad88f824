import { describe, expect, it } from "vitest";
import { createSource, ingest } from "../helpers/ingest";
import { useServer } from "../helpers/fixture";
import { call, type TestServer } from "../helpers/server";

/**
 * A search reads the bodies of its window as text (docs/ingest.md, "Events
 * API"). Ingest stores any bytes a provider sends, so a window may hold a
 * body that is not UTF-8: the search still answers, and such a body matches
 * only where its bytes hold the term.
 */
let server: TestServer, key: string;
useServer({}, (s) => ({ server, key } = s));

describe("GET /v1/events?search= over bodies that are not UTF-8", () => {
  it("answers 200 and finds the text bodies, whatever bytes the others hold", async () => {
    const s = await createSource(server, key, { name: "binary-search" });
    // 0xff and 0xfe never occur in UTF-8; the digits and punctuation around them are what PostgreSQL's prefilter looks for.
    const binary = new Uint8Array([0xff, 0xfe, 0x5f, 0x34, 0x32, 0x34, 0x32, 0x00, 0xc3]);
    const bin = await ingest(server, s.id, { body: binary, headers: { "content-type": "application/octet-stream" } });
    expect(bin.status).toBe(200);
    const text = await ingest(server, s.id, { body: '{"customer":"cus_4242","note":"Grüße aus C:\\\\temp"}' });
    expect(text.status).toBe(200);

    for (const term of ["cus_4242", "_4242", "CUSTOMER", "Grüße", "c:\\\\temp"]) {
      const res = await call(server, "GET", `/v1/events?source_id=${s.id}&search=${encodeURIComponent(term)}`, { key });
      expect(res.status, `${term}: ${JSON.stringify(res.body)}`).toBe(200);
      const ids = (res.body.events as { id: string }[]).map((e) => e.id);
      expect(ids, term).toContain(text.body.event_id);
      expect(res.body.pagination.total, term).toBe(ids.length);
    }
    // Case is ignored for ASCII only, on both stores; the bytes of other letters match as they are.
    const upper = await call(server, "GET", `/v1/events?source_id=${s.id}&search=${encodeURIComponent("GRÜSSE")}`, { key });
    expect(upper.status).toBe(200);
    expect(upper.body.events).toEqual([]);
    // The binary body holds the bytes of `_4242`: a search for them finds it, on both stores.
    const raw = await call(server, "GET", `/v1/events?source_id=${s.id}&search=_4242`, { key });
    expect((raw.body.events as { id: string }[]).map((e) => e.id).sort()).toEqual([bin.body.event_id, text.body.event_id].sort());
  });
});
