-- pagination.total from counters (src/db/schema/counts.ts): statement triggers with transition tables,
-- so a batch (an ingest group commit, a claim of 50 rows, an outcome batch) adds its counts in one
-- upsert per statement rather than one per row. Each backend writes its own shard (pid % 1024): two
-- live backends share one with odds of 1 in 1024, so the transactions of several nodes almost never
-- wait on each other's counter rows (and cannot deadlock on them unless they share a shard and take
-- keys in opposite orders across statements); a long-lived pool leaves a few shards per key for reads
-- to sum. The rows of one statement are upserted in key order. A statement
-- whose changes cancel out (an UPDATE that leaves the counted columns alone) writes nothing.
CREATE FUNCTION event_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO event_counts (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard, n)
      SELECT org_id, env_id, source_id, status, verification_status, dedup_status, method, pg_backend_pid() % 1024, count(*) FROM new_rows GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
      ON CONFLICT (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard) DO UPDATE SET n = event_counts.n + excluded.n;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO event_counts (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard, n)
      SELECT org_id, env_id, source_id, status, verification_status, dedup_status, method, pg_backend_pid() % 1024, -count(*) FROM old_rows GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
      ON CONFLICT (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard) DO UPDATE SET n = event_counts.n + excluded.n;
  ELSE
    INSERT INTO event_counts (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard, n)
      SELECT org_id, env_id, source_id, status, verification_status, dedup_status, method, pg_backend_pid() % 1024, sum(d) FROM (
        SELECT org_id, env_id, source_id, status, verification_status, dedup_status, method, 1 AS d FROM new_rows
        UNION ALL
        SELECT org_id, env_id, source_id, status, verification_status, dedup_status, method, -1 AS d FROM old_rows
      ) AS changed GROUP BY 1, 2, 3, 4, 5, 6, 7 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4, 5, 6, 7
      ON CONFLICT (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard) DO UPDATE SET n = event_counts.n + excluded.n;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER events_count_insert AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION event_counts_apply();
--> statement-breakpoint
CREATE TRIGGER events_count_delete AFTER DELETE ON events REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION event_counts_apply();
--> statement-breakpoint
CREATE TRIGGER events_count_update AFTER UPDATE ON events REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION event_counts_apply();
--> statement-breakpoint
INSERT INTO event_counts (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard, n)
  SELECT org_id, env_id, source_id, status, verification_status, dedup_status, method, 0, count(*) FROM events GROUP BY 1, 2, 3, 4, 5, 6, 7;
--> statement-breakpoint
CREATE FUNCTION attempt_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO attempt_counts (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard, n)
      SELECT org_id, env_id, destination_id, coalesce(connection_id, ''), status, is_dlq, coalesce(trigger_type, ''), pg_backend_pid() % 1024, count(*) FROM new_rows GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
      ON CONFLICT (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard) DO UPDATE SET n = attempt_counts.n + excluded.n;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO attempt_counts (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard, n)
      SELECT org_id, env_id, destination_id, coalesce(connection_id, ''), status, is_dlq, coalesce(trigger_type, ''), pg_backend_pid() % 1024, -count(*) FROM old_rows GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
      ON CONFLICT (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard) DO UPDATE SET n = attempt_counts.n + excluded.n;
  ELSE
    INSERT INTO attempt_counts (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard, n)
      SELECT org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, pg_backend_pid() % 1024, sum(d) FROM (
        SELECT org_id, env_id, destination_id, coalesce(connection_id, '') AS connection_id, status, is_dlq, coalesce(trigger_type, '') AS trigger_type, 1 AS d FROM new_rows
        UNION ALL
        SELECT org_id, env_id, destination_id, coalesce(connection_id, '') AS connection_id, status, is_dlq, coalesce(trigger_type, '') AS trigger_type, -1 AS d FROM old_rows
      ) AS changed GROUP BY 1, 2, 3, 4, 5, 6, 7 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4, 5, 6, 7
      ON CONFLICT (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard) DO UPDATE SET n = attempt_counts.n + excluded.n;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER attempts_count_insert AFTER INSERT ON delivery_attempts REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION attempt_counts_apply();
--> statement-breakpoint
CREATE TRIGGER attempts_count_delete AFTER DELETE ON delivery_attempts REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION attempt_counts_apply();
--> statement-breakpoint
CREATE TRIGGER attempts_count_update AFTER UPDATE ON delivery_attempts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION attempt_counts_apply();
--> statement-breakpoint
INSERT INTO attempt_counts (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard, n)
  SELECT org_id, env_id, destination_id, coalesce(connection_id, ''), status, is_dlq, coalesce(trigger_type, ''), 0, count(*) FROM delivery_attempts GROUP BY 1, 2, 3, 4, 5, 6, 7;
