#!/usr/bin/env bash
# The application's commit rate beside the relay (issue #15): pgbench, 16 clients, one single-row
# insert per transaction into a migrated outbox, in interleaved rounds of
#   none  the insert trigger disabled
#   v1    the trigger of migration V1 (always NOTIFY)
#   v6    the trigger of migration V6 (NOTIFY only while no lane of the relay is busy)
#   v7    the trigger of migration V7 (as V6, and only while a relay listens)
# first with the relay stopped, then with it running (polling -> Kafka, draining what pgbench
# commits; it has settled everything before each round starts). Prints one line per round with
# the load average. Needs pgbench and psql, the local services (scripts/services.sh), and the
# daemon built (relay/daemon/target). Usage: bench/scripts/commit-rate.sh [rounds] [seconds]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
rounds="${1:-3}"
secs="${2:-15}"
export PGHOST="${OUTBOX_PG_HOST:-127.0.0.1}" PGPORT="${OUTBOX_PG_PORT:-5432}" PGUSER="${OUTBOX_PG_USER:-postgres}"
db="commit_rate_$$"
work="$(mktemp -d)"
cp="$root/relay/daemon/target/outbox-relay.jar:$root/relay/daemon/target/lib/*"
relay=""
cleanup() {
  if [[ -n "$relay" ]]; then kill "$relay" 2>/dev/null || true; wait "$relay" 2>/dev/null || true; fi
  psql -d postgres -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" || true
}
trap cleanup EXIT
psql -d postgres -qc "CREATE DATABASE $db"
cat >"$work/relay.conf" <<CONF
outbox-relay {
  http { host = "127.0.0.1", port = 0 }
  pipelines.bench {
    database { url = "jdbc:postgresql://$PGHOST:$PGPORT/$db", user = "$PGUSER" }
    table = "outbox"
    source.type = polling
    sink.type = kafka
    sink.kafka.bootstrap-servers = "${OUTBOX_KAFKA_BOOTSTRAP:-127.0.0.1:9092}"
    routing.destination = "$db"
  }
}
CONF
java -cp "$cp" io.outbox.relay.cli.Main migrate --config "$work/relay.conf" >/dev/null
psql -d "$db" -Atc "SELECT pg_get_functiondef('public.outbox_relay_notify_outbox'::regproc) || ';'" >"$work/v7.sql"
key="$(grep -oE 'pg_try_advisory_xact_lock_shared\((-?[0-9]+), 3\)' "$work/v7.sql" | grep -oE '\(-?[0-9]+' | tr -d '(')"
[[ -n "$key" ]] || { echo "commit-rate: the migrated trigger is not V7's (no lock (key, 3)): $work/v7.sql" >&2; exit 1; }
sed -e 's/\${notify_function}/public.outbox_relay_notify_outbox/' -e "s/\${notify_channel}/'outbox_relay_public_outbox'/" \
  -e "s/\${wake_lock_key}/$key/g" "$root/schema/src/main/resources/db/outbox-relay/migration/V6__quiet_wake_ups.sql" >"$work/v6.sql"
cat >"$work/v1.sql" <<'SQL'
CREATE OR REPLACE FUNCTION public.outbox_relay_notify_outbox() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN PERFORM pg_notify('outbox_relay_public_outbox', ''); RETURN NULL; END; $$;
SQL
cat >"$work/insert.sql" <<'SQL'
\set k random(1, 1000)
INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload) VALUES ('order', :k, 'created', '{"order": 1, "note": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}');
SQL
trigger() {
  case "$1" in
    none) psql -d "$db" -qc 'ALTER TABLE outbox DISABLE TRIGGER outbox_relay_notify' ;;
    *) psql -d "$db" -q -f "$work/$1.sql" -c 'ALTER TABLE outbox ENABLE TRIGGER outbox_relay_notify' ;;
  esac
}
settled() {
  for _ in $(seq 1 1200); do
    [[ "$(psql -d "$db" -Atc 'SELECT count(*) FROM outbox WHERE published_at IS NULL')" == 0 ]] && return
    sleep 0.5
  done
  echo "the relay did not settle the round's rows in 10 min (see $work/relay.log)" >&2
  exit 1
}
for phase in stopped running; do
  if [[ "$phase" == running ]]; then
    java -Xmx256m -cp "$cp" io.outbox.relay.cli.Main run --config "$work/relay.conf" >"$work/relay.log" 2>&1 &
    relay=$!
    sleep 8
  fi
  for _ in $(seq 1 "$rounds"); do
    for variant in none v1 v6 v7; do
      if [[ "$phase" == running ]]; then settled; else psql -d "$db" -qc 'TRUNCATE outbox'; fi
      trigger "$variant"
      load="$(cut -d' ' -f1-3 /proc/loadavg)"
      tps="$(pgbench -n -d "$db" -c 16 -j 2 -T "$secs" -f "$work/insert.sql" 2>&1 | awk '/^tps/ {printf "%.0f", $3}')"
      echo "$(date -u +%H:%M:%S) relay $phase, trigger $variant: $tps tps (load average $load)"
    done
  done
done
