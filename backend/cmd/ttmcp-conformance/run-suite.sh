#!/usr/bin/env bash
# Runs the client scenarios of one pinned MCP conformance runner against
# ttmcp-conformance, with a committed baseline of expected failures. Used by
# `make conformance`; see docs/CONFORMANCE.md.
#
#   run-suite.sh NAME RUNNER CLIENT BASELINE OUTDIR [runner options...]
#
# NAME      label of the run (2025, 2026): OUTDIR/NAME.log, OUTDIR/results-NAME/
# RUNNER    the runner's dist/index.js (tools/node/node_modules/conformance-*)
# CLIENT    absolute path of the built ttmcp-conformance (no spaces: the
#           runner splits its --command on spaces)
# BASELINE  expected-failures-*.yml
#
# The runner exits non-zero on an unexpected failure and on a baseline entry
# that now passes; so does this script. The node first on PATH must be 22+.
set -uo pipefail

name=$1 runner=$2 client=$3 baseline=$4 out=$5
shift 5

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/results-$name"
log="$out/$name.log"
start=$SECONDS
(cd "$out" && node "$runner" client --command "$client" --suite all \
	--expected-failures "$baseline" -o "results-$name" "$@") >"$log" 2>&1
status=$?

echo "== conformance $name ($(node "$runner" --version), node $(node --version)): exit $status in $((SECONDS - start)) s"
if grep -q '=== SUITE SUMMARY ===' "$log"; then
	sed -n '/=== SUITE SUMMARY ===/,$p' "$log" | sed 's/\x1b\[[0-9;]*m//g' | grep -v '^$'
else
	tail -n 40 "$log"
fi
echo "full log: $log; per-scenario checks, stdout and stderr: $out/results-$name/"
exit $status
