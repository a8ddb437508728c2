-- outbox-relay schema, version 7: the insert trigger notifies only while a relay listens.
-- Placeholders (filled by io.outbox.schema.Migrator from OutboxTables):
--   ${notify_function}  the trigger function of V1, e.g. "public"."outbox_relay_notify_outbox"
--   ${notify_channel}   its channel as a string literal, e.g. 'outbox_relay_public_outbox'
--   ${wake_lock_key}    an int literal, OutboxTables.wakeLockKey() (a hash of the outbox's name)
-- A relay that LISTENs on the channel holds the advisory lock (key, 3) exclusively on its
-- listening session, or waits for it there when another relay holds it; it takes it only after
-- its LISTEN is in place. With no relay listening (none runs, or only the CDC source, which reads
-- the change stream) nobody holds or waits for (key, 3): the insert takes it shared, to the end of
-- its transaction, and skips the NOTIFY, so the application's commits never queue on PostgreSQL's
-- notification lock for nobody. A relay that starts listening waits for (key, 3), that is for
-- every such transaction to end, and then looks for rows once, so none waits for the poll
-- interval. While a relay listens, V6's rule applies unchanged: notify unless a busy relay holds
-- the wake gate (key, 1). Only try-locks here: the application never waits for the relay
-- (docs/design.md, "Wake-ups").

CREATE OR REPLACE FUNCTION ${notify_function}() RETURNS trigger
    LANGUAGE plpgsql AS
$$
DECLARE
    marked boolean;
BEGIN
    IF pg_try_advisory_xact_lock_shared(${wake_lock_key}, 3) THEN
        RETURN NULL; -- no relay listens
    END IF;
    -- (key, 2) before (key, 1): a skipper must be marked before it finds the relay busy, or the
    -- relay's barrier after going idle could miss it.
    marked := pg_try_advisory_xact_lock_shared(${wake_lock_key}, 2);
    IF pg_try_advisory_xact_lock_shared(${wake_lock_key}, 1) OR NOT marked THEN
        PERFORM pg_notify(${notify_channel}, '');
    END IF;
    RETURN NULL;
END;
$$;
