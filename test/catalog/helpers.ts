import { waitFor } from "../helpers/delivery";
import { call, type TestServer } from "../helpers/server";

/** A collection made through the API (fails the test on anything but 201). */
export async function createCollection(server: TestServer, key: string, body: Record<string, unknown>) {
  const res = await call(server, "POST", "/v1/collections", { key, body });
  if (res.status !== 201) throw new Error(`create collection: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.collection as Record<string, any> & { id: string };
}

export async function getCollection(server: TestServer, key: string, id: string) {
  const res = await call(server, "GET", `/v1/collections/${id}`, { key });
  if (res.status !== 200) throw new Error(`get collection: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.collection as Record<string, any>;
}

/** Waits until the builder has handled every stored event of the collection's source. */
export async function waitBuilt(server: TestServer, key: string, id: string, timeoutMs = 30_000) {
  return waitFor(
    async () => {
      const c = await getCollection(server, key, id);
      return c.events_pending === 0 && c.build_status === "live" ? c : null;
    },
    { timeoutMs, what: `collection ${id} built` },
  );
}

export async function records(server: TestServer, key: string, id: string, query: Record<string, string> = {}) {
  const res = await call(server, "GET", `/v1/collections/${id}/records?${new URLSearchParams({ limit: "100", ...query })}`, { key });
  if (res.status !== 200) throw new Error(`records: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { records: any[]; has_more: boolean; next_cursor: string | null };
}

export async function record(server: TestServer, key: string, id: string, recordKey: string) {
  return call(server, "GET", `/v1/collections/${id}/records/${encodeURIComponent(recordKey)}`, { key });
}

export async function changelog(server: TestServer, key: string, id: string, recordKey: string, limit = 100) {
  const res = await call(server, "GET", `/v1/collections/${id}/records/${encodeURIComponent(recordKey)}/changelog?limit=${limit}`, { key });
  if (res.status !== 200) throw new Error(`changelog: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.changelog as any[];
}
