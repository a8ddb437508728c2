#!/usr/bin/env bash
# Issue #14's long proof, not part of scripts/test.sh: ExactlyOnceIT's kill -9 scenario with ten
# kill -9s of the relay under a 20,000-event backlog (sink.kafka.delivery = exactly-once), then a
# read_committed consumer that must see every committed event exactly once, in key order.
#
#   scripts/exactly-once-long.sh [KILLS]      (default 10)
#
# Needs the services of scripts/services.sh (`scripts/services.sh up`) and the modules installed
# (`mvn -B -o -q install -DskipTests -pl '!dist'`). Relay logs go to
# relay/daemon/target/relay-processes/ExactlyOnceIT-killDashNine*/.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
kills="${1:-10}"
export OUTBOX_RELAY_HOME="${OUTBOX_RELAY_HOME:-$root}"
eval "$(scripts/services.sh env)"
"${MVN:-mvn}" -B -o verify -pl relay/daemon -Dtest=none \
  -Dit.test='ExactlyOnceIT#killDashNineUnderLoadDeliversEveryEventOnce' \
  -Dexactly-once.kills="$kills" \
  -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false \
  | grep -E 'ExactlyOnceIT:|Tests run:|FAIL|BUILD'
