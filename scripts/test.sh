#!/usr/bin/env bash
# `bun run test`: every test file on the default stack (in-memory SQLite, memory cache), then
# the end-to-end suites (the ones built on test/support/harness.ts's createWorld) once more
# on PostgreSQL + Redis, because README.md promises every rule holds there too.
#
# `bun run test:fast` (`scripts/test.sh --fast`): the fast tier alone (docs/testing.md): every
# test file except test/e2e/ (real processes, the compiled binary) and test/browser/
# (Chromium), with INTAKE_TEST_TIER=fast so the suites that need PostgreSQL or Redis skip
# without connecting; on the default stack only, with no second pass.
#
# The second pass runs when both servers answer; otherwise it is skipped with one SKIP line,
# unless INTAKE_REQUIRE_SERVICES=1 (CI), where their absence is a failure.
# Exits non-zero when either pass fails, and ends with one line summing both passes:
#   tests: N passed, N failed, N skipped
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
skipped=0
status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# The last "<N> <word>" summary line bun printed, or 0.
count() {
  local n
  n=$(grep -Eo "^ *[0-9]+ $1\$" "$log" | tail -n1 | grep -Eo '[0-9]+')
  echo "${n:-0}"
}

# Runs one `bun test ...` invocation and adds its summary to the totals.
pass() {
  local rc p f s t
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  p=$(count pass)
  f=$(count fail)
  s=$(count skip)
  t=$(count todo)
  passed=$((passed + p))
  failed=$((failed + f))
  # A todo is a test that did not run, as a skip is.
  skipped=$((skipped + s + t))
  if [ "$rc" -ne 0 ]; then
    status=1
    # bun failed without a failing test to show for it (it crashed, or matched no file):
    # the closing line must not read "0 failed" for a run that failed.
    if [ "$f" -eq 0 ]; then failed=$((failed + 1)); fi
  fi
}

# Suites on real PostgreSQL and Redis and the end-to-end ones start servers and databases: a
# test gets 30 s, not bun's default 5 s, so a slow or busy machine does not fail them. On the
# command line: bunfig.toml says why it cannot live there (bun 1.4.5 ignores it).
TIMEOUT_MS=30000

if [ "${1:-}" = "--fast" ]; then
  shift # what follows narrows the tier, as bun test's own filters do: `bun run test:fast test/domain`
  INTAKE_TEST_TIER=fast INTAKE_TEST_STACK=sqlite-memory pass bun test --timeout "$TIMEOUT_MS" \
    --path-ignore-patterns 'test/e2e/**' --path-ignore-patterns 'test/browser/**' "$@"
  echo
  echo "tests: $passed passed, $failed failed, $skipped skipped"
  exit "$status"
elif [ -n "${1:-}" ]; then
  echo "usage: scripts/test.sh [--fast [bun test filters]]" >&2
  exit 2
fi

pass bun test --timeout "$TIMEOUT_MS"

# The suites that build their worlds with createWorld; only directories that exist and
# hold test files (bun fails on a filter that matches nothing).
dirs=()
for dir in test/gateway test/e2e test/rpc; do
  if [ -n "$(find "$dir" -name '*.test.ts' -print -quit 2>/dev/null)" ]; then dirs+=("$dir"); fi
done

probe=$(bun test/support/probe-services.ts 2>&1)
probe_rc=$?
if [ ${#dirs[@]} -eq 0 ]; then
  echo "SKIP: conformance on PostgreSQL+Redis: no test files in test/gateway, test/e2e or test/rpc"
elif [ "$probe_rc" -eq 0 ]; then
  printf '\n== conformance on PostgreSQL+Redis: %s\n' "${dirs[*]}"
  INTAKE_TEST_STACK=postgres-redis pass bun test --timeout "$TIMEOUT_MS" "${dirs[@]}"
elif [ "${INTAKE_REQUIRE_SERVICES:-}" = "1" ]; then
  echo "FAIL: conformance on PostgreSQL+Redis: INTAKE_REQUIRE_SERVICES=1 but ${probe}"
  status=1
  failed=$((failed + 1))
else
  echo "SKIP: conformance on PostgreSQL+Redis: ${probe} (set INTAKE_REQUIRE_SERVICES=1 to fail instead)"
fi

echo
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit "$status"
