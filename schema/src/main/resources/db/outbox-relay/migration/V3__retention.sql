-- outbox-relay schema, version 3: what retention needs, and autovacuum settings for a queue table.
-- Placeholders (filled by io.outbox.schema.Migrator from OutboxTables):
--   ${outbox_table}     the outbox table, e.g. "public"."outbox"
--   ${published_index}  partial index of published rows, e.g. "outbox_published_idx"
-- docs/maintenance.md explains every setting.

-- Retention deletes published rows (on-publish = mark) oldest first, a small batch at a time: it
-- needs to find them without scanning the pending rows. A partial index: pending rows never enter
-- it. Marking a row published updates an indexed predicate column anyway (the pending index), so
-- this index adds no HOT-update loss. On a large existing outbox, CREATE INDEX blocks inserts while
-- it builds: create it beforehand with CREATE INDEX CONCURRENTLY and the same name and definition
-- (see docs/maintenance.md); IF NOT EXISTS then keeps it.
CREATE INDEX IF NOT EXISTS ${published_index}
    ON ${outbox_table} (published_at) WHERE published_at IS NOT NULL;

-- The outbox is a queue: every row is inserted, updated once or twice, then deleted (on-publish =
-- delete, or retention). PostgreSQL's defaults vacuum a table after 20% of it is dead, which lets
-- dead tuples pile up in the pending index that every claim scans. Vacuum and analyze after ~1% of
-- the rows (at least 1,000) changed instead.
ALTER TABLE ${outbox_table} SET (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_insert_scale_factor = 0.01,
    autovacuum_vacuum_insert_threshold = 1000,
    autovacuum_analyze_scale_factor = 0.01,
    autovacuum_analyze_threshold = 1000
);
