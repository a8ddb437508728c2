-- outbox-relay schema, version 2: where the CDC source keeps its stream positions.
-- Placeholders (filled by io.outbox.schema.Migrator from OutboxTables):
--   ${offsets_table}   the offsets table, e.g. "public"."outbox_relay_offsets"
--   ${offsets_pkey}    its primary key constraint, e.g. "outbox_relay_offsets_pkey"
-- One row per pipeline and Debezium offset key. The relay writes a position only once every event
-- before it has a final verdict, so a relay on any host resumes from here without losing events.

CREATE TABLE IF NOT EXISTS ${offsets_table} (
    pipeline     text        NOT NULL,
    offset_key   bytea       NOT NULL,
    offset_value bytea       NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ${offsets_pkey} PRIMARY KEY (pipeline, offset_key)
);
