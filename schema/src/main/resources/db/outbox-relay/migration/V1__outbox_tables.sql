-- outbox-relay schema, version 1: the outbox, its dead letters, and the wake-up trigger.
-- Placeholders (filled by io.outbox.schema.Migrator from OutboxTables; every value is a complete,
-- quoted identifier or literal, at most 63 bytes per identifier, never glued to other text):
--   ${outbox_table}                the outbox table, e.g. "public"."outbox"
--   ${outbox_pkey}                 its primary key constraint, e.g. "outbox_pkey"
--   ${outbox_event_id_key}         its unique constraint on event_id, e.g. "outbox_event_id_key"
--   ${pending_index}               partial index of unpublished rows, e.g. "outbox_pending_idx"
--   ${retrying_index}              partial index of rows waiting for a retry, e.g. "outbox_retrying_idx"
--   ${dead_letter_table}           the dead-letter table, e.g. "public"."outbox_dead_letter"
--   ${dead_letter_pkey}            its primary key constraint, e.g. "outbox_dead_letter_pkey"
--   ${dead_letter_reason_check}    its check on reason, e.g. "outbox_dead_letter_reason_check"
--   ${dead_lettered_at_index}      e.g. "outbox_dead_letter_dead_lettered_at_idx"
--   ${dead_letter_event_id_index}  e.g. "outbox_dead_letter_event_id_idx"
--   ${notify_function}             the trigger function, e.g. "public"."outbox_relay_notify_outbox"
--   ${notify_channel}              the LISTEN/NOTIFY channel as a string literal, e.g. 'outbox_relay_public_outbox'
-- Names are derived from the table names so that several outboxes can share a schema.
-- gen_random_uuid() is built into PostgreSQL 13+; the Migrator refuses older servers.

CREATE TABLE IF NOT EXISTS ${outbox_table} (
    id              bigint GENERATED ALWAYS AS IDENTITY,
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
    CONSTRAINT ${outbox_pkey} PRIMARY KEY (id),
    CONSTRAINT ${outbox_event_id_key} UNIQUE (event_id)
);

-- The claim scans pending rows in id order: a partial index stays small however many
-- published rows are kept (on-publish = mark).
CREATE INDEX IF NOT EXISTS ${pending_index}
    ON ${outbox_table} (id) WHERE published_at IS NULL;

-- Keys held back by an event waiting for its retry: tiny, probed once per claimed row.
CREATE INDEX IF NOT EXISTS ${retrying_index}
    ON ${outbox_table} (aggregate_type, aggregate_id, id)
    WHERE published_at IS NULL AND next_attempt_at IS NOT NULL;

CREATE TABLE IF NOT EXISTS ${dead_letter_table} (
    id               bigint      NOT NULL,
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
    reason           text        NOT NULL,
    pipeline         text        NOT NULL,
    CONSTRAINT ${dead_letter_pkey} PRIMARY KEY (id),
    CONSTRAINT ${dead_letter_reason_check} CHECK (reason IN ('max-attempts', 'permanent'))
);

CREATE INDEX IF NOT EXISTS ${dead_lettered_at_index}
    ON ${dead_letter_table} (dead_lettered_at);
CREATE INDEX IF NOT EXISTS ${dead_letter_event_id_index}
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
