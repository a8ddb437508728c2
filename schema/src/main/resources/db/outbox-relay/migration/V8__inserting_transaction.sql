-- outbox-relay schema, version 8: each row records the transaction that inserted it, and the
-- positions of settlement by position (issue #35; the relay does not use either yet).
-- Placeholders (filled by io.outbox.schema.Migrator from OutboxTables):
--   ${outbox_table}     the outbox table, e.g. "public"."outbox"
--   ${position_table}   the position table, e.g. "public"."outbox_relay_position"
--   ${position_pkey}    its primary key constraint, e.g. "outbox_relay_position_pkey"
-- tx is the id of the inserting transaction, filled by its default: the application's INSERT
-- stays as it is. It is added without a default first, so existing rows keep NULL and the table
-- is not rewritten (both statements change only the catalog); only rows inserted from now on get
-- the default. Settlement by position reads the outbox in windows cut between two snapshots by
-- this column (PgQ's way), so that a row committed late with a smaller id is never skipped.

ALTER TABLE ${outbox_table} ADD COLUMN IF NOT EXISTS tx xid8;
ALTER TABLE ${outbox_table} ALTER COLUMN tx SET DEFAULT pg_current_xact_id();

-- One row per pipeline and lane: every row whose transaction the snapshot settled sees is
-- settled (rows pending then were turned into exceptions); the window (settled, window_snapshot]
-- is being read in id order, after_id the last id read of it, last_id its last.
CREATE TABLE IF NOT EXISTS ${position_table} (
    pipeline        text        NOT NULL,
    lane            integer     NOT NULL,
    settled         pg_snapshot NOT NULL,
    window_snapshot pg_snapshot NOT NULL,
    after_id        bigint      NOT NULL,
    last_id         bigint      NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ${position_pkey} PRIMARY KEY (pipeline, lane)
);
