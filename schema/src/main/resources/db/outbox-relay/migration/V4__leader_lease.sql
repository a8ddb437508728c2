-- outbox-relay schema, version 4: the leader lease, which fences a pipeline's active instance.
-- Placeholders (filled by io.outbox.schema.Migrator from OutboxTables):
--   ${leader_table}   the lease table, e.g. "public"."outbox_relay_leader"
--   ${leader_pkey}    its primary key constraint, e.g. "outbox_relay_leader_pkey"
-- One row per pipeline. The active instance renews expires_at (database clock) every
-- leadership-check-interval; a standby that finds it expired ends the holder's sessions and takes
-- over with epoch + 1. Every claim checks the epoch in SQL, so an instance that was frozen or cut
-- off can neither claim nor settle once another took over (docs/design.md, "Leadership").

CREATE TABLE IF NOT EXISTS ${leader_table} (
    pipeline    text        NOT NULL,
    epoch       bigint      NOT NULL,
    holder      text        NOT NULL,
    holder_pid  integer     NOT NULL,
    acquired_at timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    CONSTRAINT ${leader_pkey} PRIMARY KEY (pipeline)
);
