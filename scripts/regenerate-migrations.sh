#!/usr/bin/env bash
# Until the first release, the schema lives in one migration, regenerated
# from src/db/schema whenever it changes. After a release: `npm run db:generate`
# adds a new migration and the committed ones are never edited.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf src/db/migrations
bun --bun drizzle-kit generate --name init
