#!/usr/bin/env bash
# The timing report of a test run: the slowest test classes with their wall time and the total per
# module, read from the Surefire and Failsafe XML reports under */target/. scripts/test.sh prints it
# at the end of every run and keeps it as target/test-times.txt.
#
#   scripts/test-times.sh [--since FILE] [--top N]
#
# --since FILE  only reports written after FILE was (test.sh touches one as a run starts, so that
#               reports an earlier run left behind are not counted)
# --top N       how many of the slowest classes to list (default 20)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

since=""
top=20
while [[ $# -gt 0 ]]; do
  case "$1" in
    --since) since="$2"; shift 2 ;;
    --top) top="$2"; shift 2 ;;
    *) echo "test-times: unknown argument '$1' (--since FILE, --top N)" >&2; exit 2 ;;
  esac
done

find_args=(. -path ./.run -prune -o -type f -path '*/target/*-reports/TEST-*.xml')
if [[ -n "$since" ]]; then
  find_args+=(-newer "$since")
fi
find_args+=(-print)

# One line per class: seconds, kind (unit|IT), module, tests, failed, skipped, class.
rows=$(
  find "${find_args[@]}" | sort | while read -r file; do
    module=${file#./}
    module=${module%%/target/*}
    kind=unit
    [[ "$file" == */failsafe-* ]] && kind=IT
    head -c 4096 "$file" | tr '\n' ' ' | grep -o '<testsuite [^>]*>' | awk 'NR == 1' |
      awk -v module="$module" -v kind="$kind" '
        function attr(name,   m) {
          if (match($0, " " name "=\"[^\"]*\"")) {
            m = substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 4)
            return m
          }
          return ""
        }
        {
          printf "%.1f %s %s %d %d %d %s\n", attr("time") + 0, kind, module, attr("tests"),
            attr("failures") + attr("errors"), attr("skipped"), attr("name")
        }'
  done
)

# A class whose tests ran in two executions (its exclusive ones alone) has two reports: one row.
rows=$(awk '
  { key = $2 " " $3 " " $7
    if (!(key in secs)) order[++n] = key
    secs[key] += $1; tests[key] += $4; failed[key] += $5; skipped[key] += $6 }
  END {
    for (i = 1; i <= n; i++) {
      split(order[i], k, " ")
      printf "%.1f %s %s %d %d %d %s\n", secs[order[i]], k[1], k[2], tests[order[i]],
        failed[order[i]], skipped[order[i]], k[3]
    }
  }' <<<"$rows")

if [[ -z "$rows" ]]; then
  echo "test-times: no test reports found${since:+ newer than $since}"
  exit 0
fi

echo "The $top slowest test classes (wall time of each class, from the Maven test reports):"
printf '%9s  %-4s  %-16s  %5s  %s\n' seconds kind module tests class
# awk reads all of sort's output: a `head` here would close the pipe early and, under pipefail,
# end the script with SIGPIPE (exit 141) once the report outgrows sort's buffer.
sort -k1,1 -g -r <<<"$rows" |
  awk -v top="$top" 'NR <= top { printf "%9.1f  %-4s  %-16s  %5d  %s\n", $1, $2, $3, $4, $7 }'
echo
echo "Per module (sum of class wall times; unit tests and ITs):"
awk '
  { key = $3; mods[key] = 1
    if ($2 == "IT") { its[key] += $1; itn[key] += $4 } else { unit[key] += $1; unitn[key] += $4 }
    fail += $5; skip += $6; tests += $4; total += $1 }
  END {
    printf "%-16s  %9s  %6s  %9s  %6s\n", "module", "unit s", "tests", "IT s", "tests"
    for (m in mods) printf "%-16s  %9.1f  %6d  %9.1f  %6d\n", m, unit[m], unitn[m], its[m], itn[m] | "sort"
    close("sort")
    printf "%-16s  %9s  %6d  %9s  %6s   (%d failed, %d skipped; %.0f s of tests in all)\n",
      "all", "", tests, "", "", fail, skip, total
    printf "tests: %d passed, %d failed, %d skipped\n", tests - fail - skip, fail, skip
  }' <<<"$rows"
