#!/usr/bin/env bash
# Runs integration test classes of one module several times in a row and counts the runs that
# failed: the check that a timing assertion holds on a loaded machine (docs/testing.md), e.g. run
# from a second checkout while scripts/test.sh runs in the first.
#
#   scripts/repeat-its.sh [--times N] [--module DIR] CLASS [CLASS...]
#
# --times N     how many runs of the classes (default 10)
# --module DIR  the Maven module that holds the classes (default relay/daemon)
#
# Each run is `mvn verify` of the module (and what it builds on) with only those classes; the
# services must be up (scripts/services.sh up). The output of each run goes to
# target/repeat-its/run-<i>.log; the lines the tests print with their measured figures are echoed.
# Exits 1 when any run failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

times=10
module=relay/daemon
classes=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --times) times="$2"; shift 2 ;;
    --module) module="$2"; shift 2 ;;
    -*) echo "repeat-its: unknown option '$1' (--times N, --module DIR)" >&2; exit 2 ;;
    *) classes+=("$1"); shift ;;
  esac
done
if [[ ${#classes[@]} -eq 0 ]]; then
  echo "repeat-its: name at least one test class, e.g. FrozenActiveIT" >&2
  exit 2
fi

if [[ ! -f "$module/pom.xml" ]]; then
  echo "repeat-its: no Maven module at '$module' (e.g. relay/daemon, sources/polling, sources/cdc)" >&2
  exit 2
fi
eval "$(scripts/services.sh env)"
mkdir -p target/repeat-its
list=$(IFS=,; echo "${classes[*]}")
passed=0
failed=0
for ((i = 1; i <= times; i++)); do
  log=target/repeat-its/run-$i.log
  if mvn -B verify -pl "$module" -am -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false \
      -Dfailsafe.failIfNoSpecifiedTests=false -Dit.test="$list" -Dspotless.check.skip=true \
      -Dit.groups='!exclusive' -Dit.exclusive.groups=exclusive \
      >"$log" 2>&1; then
    passed=$((passed + 1))
    verdict=passed
  else
    failed=$((failed + 1))
    verdict="FAILED (see $log)"
  fi
  echo "run $i of $times: $verdict"
  grep -hE "^[A-Za-z]+IT( \([^)]*\))?: " "$log" | sed 's/^/    /' || true
done
echo "repeat-its: $list, $times runs: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
