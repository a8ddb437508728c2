#!/usr/bin/env bash
# Issue #14's long proof, not part of scripts/test.sh: the kill -9 scenario of ExactlyOnceIT
# (polling source: ten kill -9s of the relay under a 20,000-event backlog) or of CdcExactlyOnceIT
# (--source cdc: ten kill -9s of relays streaming from a slot under a steady stream of events),
# with sink.kafka.delivery = exactly-once, then a read_committed consumer that must see every
# committed event exactly once, in key order.
#
#   scripts/exactly-once-long.sh [--source polling|cdc] [KILLS]      (default: polling, 10)
#
# Needs the services of scripts/services.sh (`scripts/services.sh up`) and the modules installed
# (`mvn -B -o -q install -DskipTests -pl '!dist'`). Relay logs go to
# relay/daemon/target/relay-processes/ExactlyOnceIT-killDashNine*/ (CdcExactlyOnceIT-... with cdc).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source=polling
if [[ "${1:-}" == "--source" ]]; then
  source="${2:?--source needs polling or cdc}"
  shift 2
fi
case "$source" in
  polling) test_class=ExactlyOnceIT ;;
  cdc) test_class=CdcExactlyOnceIT ;;
  *) echo "exactly-once-long.sh: --source must be polling or cdc, not '$source'" >&2; exit 2 ;;
esac
kills="${1:-10}"
export OUTBOX_RELAY_HOME="${OUTBOX_RELAY_HOME:-$root}"
eval "$(scripts/services.sh env)"
"${MVN:-mvn}" -B -o verify -pl relay/daemon -Dtest=none \
  -Dit.test="${test_class}#killDashNineUnderLoadDeliversEveryEventOnce" \
  -Dexactly-once.kills="$kills" -Dit.groups='!exclusive' -Dit.exclusive.groups=exclusive \
  -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false \
  | grep -E 'ExactlyOnceIT:|Tests run:|FAIL|BUILD'
