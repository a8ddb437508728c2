#!/usr/bin/env bash
# The randomised fault soak (issue #12): two relay processes on one pipeline against PostgreSQL and
# a private broker, writers with concurrent, long, rolled-back, delayed and retryably refused
# events, and a fault every 10 s (SIGKILL, SIGTERM, SIGSTOP of a relay, pg_terminate_backend of its
# sessions, broker stop/start, the database black-holed for one relay). One invariant check at the
# end; the report goes to stdout, progress to stderr. Exit 0: no invariant broken; 1: one was;
# 2: usage; 3: the soak could not run.
#
#   scripts/soak.sh --minutes 10 [--source polling|cdc] [--sink kafka|rabbitmq] [--exactly-once]
#                   [--layout plain|partitioned] [--on-publish mark|position] [--seed S] [--json]
#
# --on-publish position (polling, at least once, plain layout): the relays settle by position
# (migrate's index on tx included); the drain and the progress checks read the lanes' positions.
#
# --layout partitioned: the outbox is partitioned (layout = partitioned, 4 partitions of 10,000 ids,
# so that the events spread over them and come back to the first); retention keeps its default.
#
# --exactly-once (Kafka): the relays publish with delivery = exactly-once, relay a on 4 lanes and b on
# 2 (every hand-over changes the lane count), the broker is also killed (SIGKILL) as a fault, and the
# check reads with read_committed: a duplicate is a violation unless a relay listed that event as
# sent twice (its WARN line after a partial commit or a distrusted ledger record).
#
# Builds soak/ (and what it needs) first when its jar is missing or older than a source or pom.
# Needs the services of scripts/services.sh (PostgreSQL; the broker jars under .run/kafka, or
# rabbitmq-server): `scripts/services.sh up` first. Relay logs go to soak/target/soak-runs/<time>/.
# Environment: JAVA_OPTS, JAVA, MVN as for ./outbox-relay.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jar="soak/target/outbox-relay-soak.jar"
lib="soak/target/lib"
# The private Kafka runs the broker jars services.sh copied under $OUTBOX_RELAY_HOME/.run/kafka.
export OUTBOX_RELAY_HOME="${OUTBOX_RELAY_HOME:-$root}"

needs_build() {
  [[ -f "$jar" && -d "$lib" ]] || return 0
  [[ -n "$(find "$root" \
    \( -name target -o -name .git -o -name .run -o -path '*/src/test' \) -prune \
    -o \( -name pom.xml -o -path '*/src/main/*' \) -type f -newer "$jar" -print -quit)" ]]
}

if needs_build; then
  echo "soak: building soak/..." >&2
  "${MVN:-mvn}" -B -q -Dstyle.color=never -Dmaven.test.skip=true -Dspotless.check.skip=true \
    package -pl soak -am 1>&2 || { echo "soak: the build failed (see above)" >&2; exit 3; }
  touch "$jar"
fi

eval "$(scripts/services.sh env)"
java_bin="${JAVA:-${JAVA_HOME:+$JAVA_HOME/bin/java}}"
# shellcheck disable=SC2086
exec "${java_bin:-java}" ${JAVA_OPTS:-} -Xmx512m -Dlogback.configurationFile=soak-logback.xml -cp "$jar:$lib/*" io.outbox.soak.SoakMain "$@"
