/**
 * Writes docs/hookrelay.schema.json, the JSON Schema of the relay file
 * (docs/config-as-code.md), from the zod contract `apply` validates with
 * (src/contracts/relayFile.ts). An editor pointed at it completes and checks
 * relay.yaml. test/contracts/relay-schema.test.ts fails when it is stale.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { relayFile } from "../src/contracts/relayFile";

export const RELAY_SCHEMA_PATH = join(import.meta.dirname, "../docs/hookrelay.schema.json");

export function renderRelaySchema(): string {
  // The input side: what a person writes (a flag as true or 1, rules before normalising).
  const schema = z.toJSONSchema(relayFile, { io: "input", unrepresentable: "any", target: "draft-2020-12" });
  return JSON.stringify(schema, null, 2) + "\n";
}

if (import.meta.main) writeFileSync(RELAY_SCHEMA_PATH, renderRelaySchema());
