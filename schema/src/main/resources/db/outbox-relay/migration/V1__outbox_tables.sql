-- outbox-relay schema, version 1: the outbox, its dead letters, and the wake-up trigger.
-- Placeholders (filled by io.outbox.schema.Migrator, identifiers already quoted):
--   ${outbox_table}            the outbox table, e.g. "public"."outbox"
--   ${outbox_table_name}       its bare name, quoted, for index names, e.g. "outbox"
--   ${dead_letter_table}       the dead-letter table, e.g. "public"."outbox_dead_letter"
--   ${dead_letter_table_name}  its bare name, quoted
--   ${notify_function}         the trigger function, e.g. "public"."outbox_relay_notify_outbox"
--   ${notify_channel}          the LISTEN/NOTIFY channel as a string literal, e.g. 'outbox_relay_outbox'
-- Index names are derived from the table name so that several outboxes can share a schema.

CREATE TABLE IF NOT EXISTS ${outbox_table} (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id        uuid        NOT NULL DEFAULT gen_random_uuid(),
    aggregate_type  text        NOT NULL,
    aggregate_id    text        NOT NULL,
    event_type      text        NOT NULL,
    destination     text        NULL,
    payload         jsonb       NOT NULL,
    headers         jsonb       NOT NULL DEFAULT '{}'::jsonb,
    created_at      timestamptz NOT NULL DEFAULT now(),
    available_at    timestamptz NOT NULL DEFAULT now(),
    published_at    timestamptz NULL,
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NULL,
    last_error      text        NULL,
    CONSTRAINT ${outbox_table_name}_event_id_key UNIQUE (event_id)
);

-- The claim scans pending rows in id order: a partial index stays small however many
-- published rows are kept (on-publish = mark).
CREATE INDEX IF NOT EXISTS ${outbox_table_name}_pending_idx
    ON ${outbox_table} (id) WHERE published_at IS NULL;

-- Keys held back by an event waiting for its retry: tiny, probed once per claimed row.
CREATE INDEX IF NOT EXISTS ${outbox_table_name}_retrying_idx
    ON ${outbox_table} (aggregate_type, aggregate_id, id)
    WHERE published_at IS NULL AND next_attempt_at IS NOT NULL;

CREATE TABLE IF NOT EXISTS ${dead_letter_table} (
    id               bigint      PRIMARY KEY,
    event_id         uuid        NOT NULL,
    aggregate_type   text        NOT NULL,
    aggregate_id     text        NOT NULL,
    event_type       text        NOT NULL,
    destination      text        NULL,
    payload          jsonb       NOT NULL,
    headers          jsonb       NOT NULL DEFAULT '{}'::jsonb,
    created_at       timestamptz NOT NULL,
    available_at     timestamptz NOT NULL,
    published_at     timestamptz NULL,
    attempts         integer     NOT NULL,
    next_attempt_at  timestamptz NULL,
    last_error       text        NULL,
    dead_lettered_at timestamptz NOT NULL DEFAULT now(),
    reason           text        NOT NULL CHECK (reason IN ('max-attempts', 'permanent')),
    pipeline         text        NOT NULL
);

CREATE INDEX IF NOT EXISTS ${dead_letter_table_name}_dead_lettered_at_idx
    ON ${dead_letter_table} (dead_lettered_at);
CREATE INDEX IF NOT EXISTS ${dead_letter_table_name}_event_id_idx
    ON ${dead_letter_table} (event_id);

-- One notification per inserting statement (not per row) wakes the polling source at once.
CREATE OR REPLACE FUNCTION ${notify_function}() RETURNS trigger
    LANGUAGE plpgsql AS
$$
BEGIN
    PERFORM pg_notify(${notify_channel}, '');
    RETURN NULL;
END;
$$;

DROP TRIGGER IF EXISTS outbox_relay_notify ON ${outbox_table};
CREATE TRIGGER outbox_relay_notify
    AFTER INSERT ON ${outbox_table}
    FOR EACH STATEMENT EXECUTE FUNCTION ${notify_function}();
