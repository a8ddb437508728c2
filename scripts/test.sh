#!/usr/bin/env bash
# The project's test command (README, .ci/run): starts the services of scripts/services.sh, exports
# their endpoints and runs the full Maven build with every unit and integration test.
# Arguments go to Maven, e.g. `scripts/test.sh -pl testkit -am` or `scripts/test.sh -DskipITs`.
# OUTBOX_SKIP_SERVICES=1 skips `services.sh up` (for endpoints provided elsewhere via OUTBOX_* vars).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ "${OUTBOX_SKIP_SERVICES:-0}" != 1 ]]; then
  scripts/services.sh up
fi
eval "$(scripts/services.sh env)"

exec mvn -B verify "$@"
