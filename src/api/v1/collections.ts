import { successBody } from "../../contracts/common";
import {
  changelogList,
  changelogQuery,
  collectionBody,
  collectionList,
  createCollectionInput,
  listCollectionsQuery,
  listRecordsQuery,
  recordBody,
  recordList,
  recordParams,
  updateCollectionInput,
} from "../../contracts/collections";
import { createCollection, deleteCollection, getCollection, listCollections, updateCollection } from "../../domain/collections";
import { getRecord, getRecordChangelog, listRecords } from "../../domain/collectionRecords";
import { idParam, jsonBody, operation, responses, type Api } from "../openapi";

/** Collections CRUD, records and changelog (spec: Collections; docs/decisions.md D11). */
export function registerCollectionRoutes(api: Api) {
  const tags = ["collections"];
  operation(
    api,
    {
      tags,
      method: "get",
      path: "/collections",
      summary: "List collections, newest first, with each builder's progress",
      request: { query: listCollectionsQuery },
      responses: responses({ status: 200, schema: collectionList }, [400, 401]),
    },
    async (c, { query }) => c.json(await listCollections(c.get("deps"), c.get("scope"), query), 200),
  );
  operation(
    api,
    {
      tags,
      method: "post",
      path: "/collections",
      summary: "Create a collection; it is backfilled from the source's stored events",
      request: jsonBody(createCollectionInput),
      responses: responses({ status: 201, schema: collectionBody }, [400, 401, 403, 404]),
    },
    async (c, { body }) => c.json(await createCollection(c.get("deps"), c.get("scope"), body), 201),
  );
  operation(
    api,
    { tags, method: "get", path: "/collections/{id}", summary: "Get a collection and its builder's progress", request: { params: idParam }, responses: responses({ status: 200, schema: collectionBody }, [401, 404]) },
    async (c, { params }) => c.json(await getCollection(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      tags,
      method: "patch",
      path: "/collections/{id}",
      summary: "Update a collection (partial); changing how records are built rebuilds it",
      request: { params: idParam, ...jsonBody(updateCollectionInput) },
      responses: responses({ status: 200, schema: collectionBody }, [400, 401, 403, 404]),
    },
    async (c, { params, body }) => c.json(await updateCollection(c.get("deps"), c.get("scope"), params.id, body), 200),
  );
  operation(
    api,
    { tags, method: "delete", path: "/collections/{id}", summary: "Delete a collection with its records and changelog", request: { params: idParam }, responses: responses({ status: 200, schema: successBody }, [401, 403, 404]) },
    async (c, { params }) => c.json(await deleteCollection(c.get("deps"), c.get("scope"), params.id), 200),
  );
  operation(
    api,
    {
      tags,
      method: "get",
      path: "/collections/{id}/records",
      summary: "List records, newest first; search matches the key or the data",
      request: { params: idParam, query: listRecordsQuery },
      responses: responses({ status: 200, schema: recordList }, [400, 401, 404]),
    },
    async (c, { params, query }) => c.json(await listRecords(c.get("deps"), c.get("scope"), params.id, query), 200),
  );
  operation(
    api,
    { tags, method: "get", path: "/collections/{id}/records/{key}", summary: "Get a record by its key", request: { params: recordParams }, responses: responses({ status: 200, schema: recordBody }, [401, 404]) },
    async (c, { params }) => c.json(await getRecord(c.get("deps"), c.get("scope"), params.id, params.key), 200),
  );
  operation(
    api,
    {
      tags,
      method: "get",
      path: "/collections/{id}/records/{key}/changelog",
      summary: "A record's changes, newest first (readable after the record is deleted)",
      request: { params: recordParams, query: changelogQuery },
      responses: responses({ status: 200, schema: changelogList }, [400, 401, 404]),
    },
    async (c, { params, query }) => c.json(await getRecordChangelog(c.get("deps"), c.get("scope"), params.id, params.key, query), 200),
  );
}
