#!/usr/bin/env bash
# Installs everything (tools/setup.sh all), then runs the whole test suite in
# every environment, one after the other, even if one fails:
#   pure          tests/ but its blender/ folders, with .venvs/bpy-5.0's Python
#   bpy-4.2       the blender/ folders of tests/ (tests/blender, tests/oni/blender, ...),
#                 Blender 4.2 as a Python module (.venvs/bpy-4.2)
#   bpy-4.5       the same, Blender 4.5 as a Python module (.venvs/bpy-4.5)
#   bpy-5.0       the same, Blender 5.0 as a Python module (.venvs/bpy-5.0)
#   blender-apt   the same inside Debian's /usr/bin/blender (3.4.1), whose
#                 Python is the system one; driven by pytest-blender (.venvs/host)
# The parts run side by side, as many at a time as the machine has cores (TEST_JOBS to
# choose), each in its own scratch folders; their output is printed part by part at the end.
# Prints a table and a last line "all: N passed, M failed". Exits non-zero if
# any part failed or ran no test. With pytest arguments (e.g. -k), a part whose
# tests are all deselected (pytest exit 5) is not a failure, but at least one
# part must run something.
#
# Usage: tools/test.sh [--] [PYTEST_ARGS...]      e.g. tools/test.sh -k compat
# Env:   SKIP_SETUP=1  don't run tools/setup.sh first
#        TEST_JOBS=N   parts at a time (default: the machine's cores)
#        KEEP_TMP=1    keep the scratch directory (Blender user dirs, JUnit XML)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

[ "${1:-}" = -- ] && shift
ARGS=("$@")

fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

total_start=$SECONDS
if [ "${SKIP_SETUP:-}" != 1 ]; then
  echo "===== setup: tools/setup.sh all"
  t=$SECONDS
  if ! tools/setup.sh all; then
    echo "tools/setup.sh failed; not running the tests" >&2
    echo "all: 0 passed, 0 failed (setup failed)"
    exit 1
  fi
  echo "setup: $(fmt_time $((SECONDS - t)))"
fi

# Everything Blender (or anything else) writes during the tests goes here.
SCRATCH=$(mktemp -d /tmp/oban-test.XXXXXX)
if [ "${KEEP_TMP:-}" = 1 ]; then
  echo "scratch directory kept: $SCRATCH"
else
  trap 'rm -rf "$SCRATCH"' EXIT
fi

# JUnit XML -> "passed failed skipped tests blender_version"
junit_counts() {
  /usr/bin/env python3 - "$1" <<'PY'
import sys
import xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    print("? ? ? 0 -")
    sys.exit()
suites = [root] if root.tag == "testsuite" else root.iter("testsuite")
tests = failed = skipped = 0
for s in suites:
    tests += int(s.get("tests", 0))
    failed += int(s.get("failures", 0)) + int(s.get("errors", 0))
    skipped += int(s.get("skipped", 0))
versions = {p.get("value") for p in root.iter("property") if p.get("name") == "blender_version"}
print(tests - failed - skipped, failed, skipped, tests, ",".join(sorted(versions)) or "-")
PY
}

ROWS=()
TOTAL_PASSED=0
TOTAL_FAILED=0
ANY_FAILED=0
ANY_RAN=0
JOBS=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}   # parts run side by side, each a process of its own
NAMES=()

# start_part NAME COMMAND...   COMMAND must write its JUnit XML to $SCRATCH/NAME/junit.xml; its
# output goes to $SCRATCH/NAME/log, its exit code and seconds to $SCRATCH/NAME/done
start_part() {
  local name=$1; shift
  local dir=$SCRATCH/$name
  mkdir -p "$dir"/{config,scripts,resources,cache,home,tmp}
  NAMES+=("$name")
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  (
    t=$SECONDS
    (
      export BLENDER_USER_CONFIG=$dir/config
      export BLENDER_USER_SCRIPTS=$dir/scripts
      export BLENDER_USER_RESOURCES=$dir/resources
      export XDG_CACHE_HOME=$dir/cache
      export HOME=$dir/home
      export TMPDIR=$dir/tmp
      echo "===== $name:$(printf " %q" "$@")"
      exec "$@"
    ) >"$dir/log" 2>&1
    echo "$? $((SECONDS - t))" >"$dir/done"
  ) &
}

# finish_part NAME: its output, and its row of the table
finish_part() {
  local name=$1
  local dir=$SCRATCH/$name
  local rc secs passed failed skipped tests version status
  echo
  cat "$dir/log"
  read -r rc secs <"$dir/done"
  read -r passed failed skipped tests version < <(junit_counts "$dir/junit.xml")
  if [ "$rc" -eq 0 ] && [ "$tests" -gt 0 ]; then
    status=ok; ANY_RAN=1
  elif [ "$rc" -eq 5 ] && [ ${#ARGS[@]} -gt 0 ]; then
    status="none selected"
  else
    status=FAILED; ANY_FAILED=1
    [ "$rc" -eq 0 ] && status="FAILED (no test ran)"
    [ "$tests" -gt 0 ] && ANY_RAN=1
  fi
  [ "$passed" = "?" ] || TOTAL_PASSED=$((TOTAL_PASSED + passed))
  [ "$failed" = "?" ] || TOTAL_FAILED=$((TOTAL_FAILED + failed))
  ROWS+=("$(printf '%-12s %-8s %6s %6s %7s %4s %7s  %s' \
    "$name" "$version" "$passed" "$failed" "$skipped" "$rc" "$(fmt_time $secs)" "$status")")
}

# the tests that need Blender: every folder called blender/ (the layers that build scenes)
mapfile -t BLENDER_TESTS < <(find tests -type d -name blender | sort)

echo "running the parts $JOBS at a time (TEST_JOBS); each part's output follows when all are done"
start_part pure .venvs/bpy-5.0/bin/python -m pytest tests "--ignore-glob=*/blender" \
  "--junitxml=$SCRATCH/pure/junit.xml" "${ARGS[@]}"

# pytest-blender: the outer pytest (.venvs/host) re-runs itself inside
# `blender -b <blender args> --python pytest_blender/run_pytest.py -- <pytest args>`.
# Arguments after the first "--" are Blender's own; --python-exit-code makes
# Blender fail if run_pytest.py dies with an exception instead of exiting.
# The test paths must come right before that "--": with an option in between,
# the outer pytest (8.4) rejects the "--" ("unrecognized arguments").
start_part blender-apt .venvs/host/bin/python -m pytest \
  --blender-executable /usr/bin/blender "--junitxml=$SCRATCH/blender-apt/junit.xml" \
  "${ARGS[@]}" "${BLENDER_TESTS[@]}" \
  -- --factory-startup -noaudio --python-exit-code 1

for v in 4.2 4.5 5.0; do
  start_part "bpy-$v" ".venvs/bpy-$v/bin/python" -m pytest "${BLENDER_TESTS[@]}" \
    "--junitxml=$SCRATCH/bpy-$v/junit.xml" "${ARGS[@]}"
done
wait
for name in "${NAMES[@]}"; do finish_part "$name"; done

[ "$ANY_RAN" = 1 ] || ANY_FAILED=1

echo
printf '%-12s %-8s %6s %6s %7s %4s %7s  %s\n' \
  environment blender passed failed skipped exit time status
for row in "${ROWS[@]}"; do echo "$row"; done
echo "total time: $(fmt_time $((SECONDS - total_start)))"
echo "all: $TOTAL_PASSED passed, $TOTAL_FAILED failed"
exit "$ANY_FAILED"
