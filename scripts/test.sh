#!/usr/bin/env bash
# The project's test command (README, .ci/run): starts the services of scripts/services.sh, exports
# their endpoints and runs the Maven build with its unit and integration tests, then prints the
# timing report of the run (scripts/test-times.sh), which it keeps as target/test-times.txt.
#
#   scripts/test.sh            the full suite: every unit and integration test (what CI runs)
#   scripts/test.sh --quick    the contributor's tier: every unit test and the integration tests
#                              tagged "quick" (one per guarantee), a few minutes
#   scripts/test.sh --long     every unit test and the integration tests tagged "long", which the
#                              full suite leaves out: heavier variants of guarantees it proves
#                              with a shorter test (before a release)
#
# Other arguments go to Maven, e.g. `scripts/test.sh -pl testkit -am` or `scripts/test.sh -DskipITs`.
# OUTBOX_SKIP_SERVICES=1 skips `services.sh up` (for endpoints provided elsewhere via OUTBOX_* vars).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tier=full
maven_args=()
for arg in "$@"; do
  case "$arg" in
    --quick) tier=quick; maven_args+=(-Pquick) ;;
    --long) tier=long; maven_args+=(-Plong) ;;
    *) maven_args+=("$arg") ;;
  esac
done

if [[ "${OUTBOX_SKIP_SERVICES:-0}" != 1 ]]; then
  scripts/services.sh up
fi
eval "$(scripts/services.sh env)"

mkdir -p target
started=target/test-run.started
touch "$started"
start_seconds=$SECONDS
status=0
mvn -B verify "${maven_args[@]}" || status=$?

{
  echo
  echo "scripts/test.sh ($tier tier): $((SECONDS - start_seconds)) s of Maven, exit status $status"
  # The report never decides the run: Maven's status does.
  scripts/test-times.sh --since "$started" || echo "scripts/test-times.sh failed (exit $?); Maven's status stands"
} | tee target/test-times.txt || true
exit "$status"
