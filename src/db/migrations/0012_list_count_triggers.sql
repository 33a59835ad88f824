-- pagination.total from counters (src/db/schema/counts.ts): row triggers, since SQLite has no statement
-- triggers; each is one upsert on a small table, inside the writing transaction. Then the counts of
-- the rows already stored.
CREATE TRIGGER events_count_insert AFTER INSERT ON events BEGIN
  INSERT INTO event_counts (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard, n) VALUES (new.org_id, new.env_id, new.source_id, new.status, new.verification_status, new.dedup_status, new.method, 0, 1)
    ON CONFLICT (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard) DO UPDATE SET n = n + 1;
END;
--> statement-breakpoint
CREATE TRIGGER events_count_delete AFTER DELETE ON events BEGIN
  INSERT INTO event_counts (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard, n) VALUES (old.org_id, old.env_id, old.source_id, old.status, old.verification_status, old.dedup_status, old.method, 0, -1)
    ON CONFLICT (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard) DO UPDATE SET n = n - 1;
END;
--> statement-breakpoint
CREATE TRIGGER events_count_update AFTER UPDATE OF org_id, env_id, source_id, status, verification_status, dedup_status, method ON events
  WHEN old.org_id IS NOT new.org_id OR old.env_id IS NOT new.env_id OR old.source_id IS NOT new.source_id OR old.status IS NOT new.status OR old.verification_status IS NOT new.verification_status OR old.dedup_status IS NOT new.dedup_status OR old.method IS NOT new.method
BEGIN
  INSERT INTO event_counts (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard, n) VALUES (old.org_id, old.env_id, old.source_id, old.status, old.verification_status, old.dedup_status, old.method, 0, -1)
    ON CONFLICT (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard) DO UPDATE SET n = n - 1;
  INSERT INTO event_counts (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard, n) VALUES (new.org_id, new.env_id, new.source_id, new.status, new.verification_status, new.dedup_status, new.method, 0, 1)
    ON CONFLICT (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard) DO UPDATE SET n = n + 1;
END;
--> statement-breakpoint
INSERT INTO event_counts (org_id, env_id, source_id, status, verification_status, dedup_status, method, shard, n)
  SELECT org_id, env_id, source_id, status, verification_status, dedup_status, method, 0, count(*) FROM events GROUP BY 1, 2, 3, 4, 5, 6, 7;
--> statement-breakpoint
CREATE TRIGGER attempts_count_insert AFTER INSERT ON delivery_attempts BEGIN
  INSERT INTO attempt_counts (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard, n) VALUES (new.org_id, new.env_id, new.destination_id, coalesce(new.connection_id, ''), new.status, new.is_dlq, coalesce(new.trigger_type, ''), 0, 1)
    ON CONFLICT (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard) DO UPDATE SET n = n + 1;
END;
--> statement-breakpoint
CREATE TRIGGER attempts_count_delete AFTER DELETE ON delivery_attempts BEGIN
  INSERT INTO attempt_counts (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard, n) VALUES (old.org_id, old.env_id, old.destination_id, coalesce(old.connection_id, ''), old.status, old.is_dlq, coalesce(old.trigger_type, ''), 0, -1)
    ON CONFLICT (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard) DO UPDATE SET n = n - 1;
END;
--> statement-breakpoint
CREATE TRIGGER attempts_count_update AFTER UPDATE OF org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type ON delivery_attempts
  WHEN old.org_id IS NOT new.org_id OR old.env_id IS NOT new.env_id OR old.destination_id IS NOT new.destination_id OR old.connection_id IS NOT new.connection_id OR old.status IS NOT new.status OR old.is_dlq IS NOT new.is_dlq OR old.trigger_type IS NOT new.trigger_type
BEGIN
  INSERT INTO attempt_counts (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard, n) VALUES (old.org_id, old.env_id, old.destination_id, coalesce(old.connection_id, ''), old.status, old.is_dlq, coalesce(old.trigger_type, ''), 0, -1)
    ON CONFLICT (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard) DO UPDATE SET n = n - 1;
  INSERT INTO attempt_counts (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard, n) VALUES (new.org_id, new.env_id, new.destination_id, coalesce(new.connection_id, ''), new.status, new.is_dlq, coalesce(new.trigger_type, ''), 0, 1)
    ON CONFLICT (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard) DO UPDATE SET n = n + 1;
END;
--> statement-breakpoint
INSERT INTO attempt_counts (org_id, env_id, destination_id, connection_id, status, is_dlq, trigger_type, shard, n)
  SELECT org_id, env_id, destination_id, coalesce(connection_id, ''), status, is_dlq, coalesce(trigger_type, ''), 0, count(*) FROM delivery_attempts GROUP BY 1, 2, 3, 4, 5, 6, 7;
