import { asc } from "drizzle-orm";
import { collections, eventTypes, topics } from "../db/schema";
import { parsedJson, type Names, type StateEntry } from "./configStateParts";
import type { Deps, Scope } from "./deps";
import { inScope } from "./scope";

/** Topics, event types and collections as relay-file entries (src/domain/configState.ts). */
export async function readCatalogState({ db }: Deps, scope: Scope, names: Names) {
  const topicRows = await db.select().from(topics).where(inScope(topics, scope)).orderBy(asc(topics.slug));
  const typeRows = await db.select().from(eventTypes).where(inScope(eventTypes, scope)).orderBy(asc(eventTypes.name));
  const collectionRows = await db.select().from(collections).where(inScope(collections, scope)).orderBy(asc(collections.name), asc(collections.id));
  return {
    topics: topicRows.map(
      (r): StateEntry => ({ id: r.id, key: r.slug, entry: { slug: r.slug, name: r.name, description: r.description, schema: parsedJson(r.schema), status: r.status } }),
    ),
    eventTypes: typeRows.map(
      (r): StateEntry => ({ id: r.id, key: r.name, entry: { name: r.name, description: r.description, json_schema: parsedJson(r.jsonSchema), status: r.status } }),
    ),
    collections: collectionRows.map(
      (r): StateEntry => ({
        id: r.id,
        key: r.name,
        entry: {
          name: r.name,
          description: r.description,
          source: names.sourceSlug.get(r.sourceId) ?? r.sourceId,
          event_types: parsedJson(r.eventTypes),
          event_type_path: r.eventTypePath,
          key_path: r.keyPath,
          transform_expression: r.transformExpression,
          delete_event_types: parsedJson(r.deleteEventTypes),
        },
      }),
    ),
  };
}
