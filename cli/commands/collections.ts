import type { Command } from "commander";
import { changelogQuery, createCollectionInput, listCollectionsQuery, listRecordsQuery, updateCollectionInput } from "../../src/contracts/collections";
import { act, noun, parseIntArg, verb } from "../command";
import { parseInput, path, type Context, type QueryValue } from "../context";
import { Resource } from "../resource";

const ID = "0123456789abcdef0123456789abcdef";
const domain = () => import("../../src/domain/collections");
const collectionRecords = () => import("../../src/domain/collectionRecords");

/** Query values as the route reads them: text, the unset ones left out. */
const asText = (q: Record<string, QueryValue>) => Object.fromEntries(Object.entries(q).flatMap(([k, v]) => (v === undefined || v === null ? [] : [[k, String(v)]])));

/** What an entry changed, in a table cell: the top-level fields whose values differ. */
export function changedFields(entry: { change_type: string; before_data: string | null; after_data: string }): string {
  if (entry.change_type !== "updated") return "";
  const parse = (t: string | null) => {
    try {
      return t === null ? undefined : (JSON.parse(t) as unknown);
    } catch {
      return t;
    }
  };
  const before = parse(entry.before_data);
  const after = parse(entry.after_data);
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  if (!isObject(before) || !isObject(after)) return "(whole data)";
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return keys.filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k])).join(", ");
}

/** Where the next page starts, said on stderr so a pipe only gets rows. */
function morePages(ctx: Context, res: { has_more: boolean; next_cursor: string | null }) {
  if (res.has_more && res.next_cursor) ctx.out.note(`more records: --cursor ${res.next_cursor}`);
}

/** `hookrelay collections list|get|create|update|delete`, `collections records list|get`, `collections changelog`. */
export function registerCollections(program: Command) {
  const r = new Resource(
    program,
    {
      noun: "collections",
      singular: "collection",
      description: "The current state of every record a source's events describe, with each record's changelog",
      path: "/collections",
      listKey: "collections",
      itemKey: "collection",
      columns: ["id", "name", "source_name", "key_path", "record_count", "build_status", "events_pending", { key: "events_missing_key", header: "missing key" }, "created_at"],
      exampleId: ID,
      domain,
    },
    [
      "hookrelay collections create --name customers --source-id src_… --key-path data.object.id --event-types customer.created,customer.updated --delete-event-types customer.deleted",
      "hookrelay collections records list COLLECTION --search jenny@example.com",
      "hookrelay collections changelog COLLECTION cus_NffrFeUfNV2Hib",
    ],
  );
  const fields = {
    help: {
      source_id: "the source whose events build the records",
      key_path: "dot path to each record's key in the body, e.g. data.object.id",
      event_type_path: "dot path to the event's type (default: type)",
      event_types: "only these types create and update records: comma-separated, or a JSON array ('null': every type)",
      delete_event_types: "these types delete the record of their key: comma-separated, or a JSON array",
      transform_expression: "JSONata producing a record's data (default: the whole body)",
    },
    files: { "--transform-file": "transform_expression" },
  };
  r.list({
    query: listCollectionsQuery,
    local: (m, deps, scope, q) => m.listCollections(deps, scope, q),
    examples: ["hookrelay collections list", "hookrelay collections list --source-id src_0123456789abcdef0123456789abcdef --json"],
  });
  r.get({ local: (m, deps, scope, id) => m.getCollection(deps, scope, id), description: "Show a collection with its build progress (backfill, counters, last error)" });
  r.create({
    input: createCollectionInput,
    ...fields,
    local: (m, deps, scope, body) => m.createCollection(deps, scope, body),
    examples: [
      "hookrelay collections create --source-id src_… --key-path data.id",
      "hookrelay collections create --name 'Stripe customers' --source-id src_… --key-path data.object.id --event-types customer.created,customer.updated --delete-event-types customer.deleted --transform-file customer.jsonata",
      "hookrelay collections create --data @collection.json --json",
    ],
  });
  r.update({
    input: updateCollectionInput,
    ...fields,
    local: (m, deps, scope, id, body) => m.updateCollection(deps, scope, id, body),
    description: "Change fields of a collection; changing how records are built rebuilds it from the stored events",
    examples: [`hookrelay collections update ${ID} --name customers`, `hookrelay collections update ${ID} --event-types null`],
  });
  r.delete({ local: (m, deps, scope, id) => m.deleteCollection(deps, scope, id), description: "Delete a collection with its records and changelog" });

  const records = noun(r.cmd, "records", "A collection's records: the latest data of each key", [`hookrelay collections records list ${ID}`, `hookrelay collections records get ${ID} cus_NffrFeUfNV2Hib`]);
  const list = verb(records, "list <collection>", "List records, newest first; search matches the key or the data", [
    `hookrelay collections records list ${ID}`,
    `hookrelay collections records list ${ID} --search jenny@example.com --event-type customer.updated`,
    `hookrelay collections records list ${ID} --limit 100 --json | jq -r '.records[].record_key'`,
  ])
    .option("--search <text>", "text in the key or the data")
    .option("--event-type <type>", "type of the event that last wrote the record")
    .option("--cursor <cursor>", "continue from a page's next_cursor")
    .option("--limit <n>", "page size, 1 to 100 (default 50)", parseIntArg("--limit", 1));
  act(list, async (ctx, opts, [id]) => {
    const query: Record<string, QueryValue> = { search: opts.search, event_type: opts.eventType, cursor: opts.cursor, limit: opts.limit };
    const res = await ctx.run({
      method: "GET",
      path: path`/collections/${id!}/records`,
      query,
      expect: "records",
      local: async (deps, scope) => (await collectionRecords()).listRecords(deps, scope, id!, parseInput(listRecordsQuery, asText(query), "query")),
    });
    ctx.out.result(res, { list: "records", columns: ["record_key", "event_type", "updated_at", "data"], empty: "No records." });
    morePages(ctx, res);
  });

  const get = verb(records, "get <collection> <key>", "Show a record by its key", [`hookrelay collections records get ${ID} cus_NffrFeUfNV2Hib`, `hookrelay collections records get ${ID} cus_NffrFeUfNV2Hib --json | jq -r '.record.data | fromjson'`]);
  act(get, async (ctx, _opts, [id, key]) => {
    const res = await ctx.run({ method: "GET", path: path`/collections/${id!}/records/${key!}`, expect: "record", local: async (deps, scope) => (await collectionRecords()).getRecord(deps, scope, id!, key!) });
    ctx.out.result(res, { item: "record" });
  });

  r.verb(
    "changelog <collection> <key>",
    "A record's changes, newest first (readable after the record was deleted)",
    [`hookrelay collections changelog ${ID} cus_NffrFeUfNV2Hib`, `hookrelay collections changelog ${ID} cus_NffrFeUfNV2Hib --limit 5 --json`],
    (cmd) => cmd.option("--limit <n>", "entries, 1 to 100 (default 50)", parseIntArg("--limit", 1)),
    async (ctx, opts, [id, key]) => {
      const query: Record<string, QueryValue> = { limit: opts.limit };
      const res = await ctx.run({
        method: "GET",
        path: path`/collections/${id!}/records/${key!}/changelog`,
        expect: "changelog",
        query,
        local: async (deps, scope) => (await collectionRecords()).getRecordChangelog(deps, scope, id!, key!, parseInput(changelogQuery, asText(query), "query")),
      });
      ctx.out.result(res, { list: "changelog", columns: ["created_at", "change_type", "event_type", { key: "changed", get: (e) => changedFields(e as never) }, "event_id", "after_data"], empty: "No changes." });
    },
  );
  return r;
}
