#!/usr/bin/env bash
# Measures distribution archives side by side (docs/releasing.md quotes it): per
# archive its size, its jar count, and over --runs alternating runs the start-up time (launch to
# /health/live answering 200) and the resident memory (VmRSS of the JVM) after --idle seconds idle
# of `bin/outbox-relay run`, one polling -> Kafka pipeline on a migrated, empty database.
#
#   scripts/measure-dist.sh [--runs 5] [--idle 20] ARCHIVE.tar.gz...
#
# Needs the services of scripts/services.sh (PostgreSQL, Kafka) and curl. Prints one line per run
# and a summary line per archive (min-median-max).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=5
idle=20
archives=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --idle) idle=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "measure-dist: unknown option $1" >&2; exit 2 ;;
    *) archives+=("$1"); shift ;;
  esac
done
[[ ${#archives[@]} -gt 0 ]] || { echo "measure-dist: name at least one archive (.tar.gz)" >&2; exit 2; }
for a in "${archives[@]}"; do [[ -f $a ]] || { echo "measure-dist: no archive at $a" >&2; exit 2; }; done
command -v curl >/dev/null || { echo "measure-dist: curl is needed" >&2; exit 3; }

eval "$(scripts/services.sh env)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=measure_dist_$$
psql_url="postgresql://${OUTBOX_PG_USER}@${OUTBOX_PG_HOST}:${OUTBOX_PG_PORT}"
PGOPTIONS="-c client_min_messages=warning" psql -q "$psql_url/postgres" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
trap 'rm -rf "$work"; psql -q "$psql_url/postgres" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true' EXIT

port=$((20000 + RANDOM % 20000))
cat >"$work/relay.conf" <<CONF
outbox-relay {
  http { host = "127.0.0.1", port = $port }
  pipelines.measure {
    database { url = "jdbc:postgresql://${OUTBOX_PG_HOST}:${OUTBOX_PG_PORT}/$db", user = "${OUTBOX_PG_USER}", password = "${OUTBOX_PG_PASSWORD}" }
    source.type = polling
    sink { type = kafka, kafka.bootstrap-servers = "${OUTBOX_KAFKA_BOOTSTRAP}" }
  }
}
CONF

i=0
for a in "${archives[@]}"; do
  i=$((i + 1))
  mkdir -p "$work/$i"
  tar -xzf "$a" -C "$work/$i" --strip-components=1
  names[$i]=$(basename "$a")
  bytes[$i]=$(stat -c %s "$a")
  jars[$i]=$(find "$work/$i/lib" -name '*.jar' | wc -l)
done
"$work/1/bin/outbox-relay" migrate --config "$work/relay.conf" >/dev/null

now_ms() { date +%s%3N; }
for ((r = 1; r <= runs; r++)); do
  for ((k = 1; k <= ${#archives[@]}; k++)); do
    start=$(now_ms)
    "$work/$k/bin/outbox-relay" run --config "$work/relay.conf" >"$work/run.log" 2>&1 &
    pid=$!
    until curl -fsS -o /dev/null "http://127.0.0.1:$port/health/live" 2>/dev/null; do
      kill -0 "$pid" 2>/dev/null || { echo "measure-dist: ${names[$k]} exited; its log:" >&2; cat "$work/run.log" >&2; exit 3; }
      sleep 0.05
    done
    up=$(($(now_ms) - start))
    sleep "$idle"
    rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$pid/status")
    kill -TERM "$pid"
    wait "$pid" || true
    echo "run $r ${names[$k]}: up in $up ms, RSS after ${idle}s idle $rss MiB"
    echo "$up $rss" >>"$work/results.$k"
  done
done

summary() { sort -n | awk '{v[NR]=$1} END {printf "%s-%s-%s", v[1], v[int((NR+1)/2)], v[NR]}'; }
echo
echo "archive | size | jars | start-up ms (min-median-max) | RSS MiB after ${idle}s idle (min-median-max)"
for ((k = 1; k <= ${#archives[@]}; k++)); do
  printf '%s | %s MB | %d | %s | %s\n' "${names[$k]}" "$(awk -v b="${bytes[$k]}" 'BEGIN {printf "%.1f", b / 1e6}')" "${jars[$k]}" \
    "$(cut -d' ' -f1 "$work/results.$k" | summary)" "$(cut -d' ' -f2 "$work/results.$k" | summary)"
done
