-- outbox-relay schema, version 5: the ledger watermark of exactly-once pipelines.
-- Placeholders (filled by io.outbox.schema.Migrator from OutboxTables):
--   ${ledger_table}   the watermark table, e.g. "public"."outbox_relay_ledger"
--   ${ledger_pkey}    its primary key constraint, e.g. "outbox_relay_ledger_pkey"
-- One row per pipeline and ledger partition (one partition per lane): the offset of the last
-- ledger record whose events are settled. A settlement advances it in its own transaction; on
-- activation the relay settles the ledger records past it without sending them again
-- (docs/design.md, "Exactly once into Kafka").

CREATE TABLE IF NOT EXISTS ${ledger_table} (
    pipeline         text        NOT NULL,
    ledger_partition integer     NOT NULL,
    settled_offset   bigint      NOT NULL,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ${ledger_pkey} PRIMARY KEY (pipeline, ledger_partition)
);
