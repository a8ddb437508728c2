-- outbox-relay schema, version 6: the insert trigger notifies only while the relay may be waiting.
-- Placeholders (filled by io.outbox.schema.Migrator from OutboxTables):
--   ${notify_function}  the trigger function of V1, e.g. "public"."outbox_relay_notify_outbox"
--   ${notify_channel}   its channel as a string literal, e.g. 'outbox_relay_public_outbox'
--   ${wake_lock_key}    an int literal, OutboxTables.wakeLockKey() (a hash of the outbox's name)
-- A NOTIFY makes its transaction take PostgreSQL's database-wide notification lock before commit
-- and hold it until the commit is flushed, so notifying transactions commit one at a time. While a
-- lane of the relay claims back-to-back it needs no wake-up: its wake gate then holds the advisory
-- lock (key, 1) exclusively and the trigger skips the NOTIFY. A skipping transaction holds
-- (key, 2) shared until it ends; when the relay stops being busy it releases (key, 1), takes
-- (key, 2) exclusively (which waits for every skipper) and looks for rows once more, so no
-- committed row waits for the poll interval (docs/design.md, "Wake-ups"). Only try-locks here:
-- the application never waits for the relay.

CREATE OR REPLACE FUNCTION ${notify_function}() RETURNS trigger
    LANGUAGE plpgsql AS
$$
DECLARE
    marked boolean;
BEGIN
    -- (key, 2) before (key, 1): a skipper must be marked before it finds the relay busy, or the
    -- relay's barrier after going idle could miss it.
    marked := pg_try_advisory_xact_lock_shared(${wake_lock_key}, 2);
    IF pg_try_advisory_xact_lock_shared(${wake_lock_key}, 1) OR NOT marked THEN
        PERFORM pg_notify(${notify_channel}, '');
    END IF;
    RETURN NULL;
END;
$$;
