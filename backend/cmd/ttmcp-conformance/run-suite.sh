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
held=$([ $status = 0 ] && echo held || echo BROKEN)

# No credential reaches the client's output: every access token, refresh
# token, authorization code and client secret the suite's servers issued or
# were sent (as each scenario's checks.json records them) is looked for in
# that scenario's stdout and stderr.
leaks=0 leaked=
for dir in "$out/results-$name"/auth/*/; do
	[ -f "$dir/checks.json" ] || continue
	while IFS= read -r secret; do
		[ -n "$secret" ] || continue
		if grep -qsF -- "$secret" "$dir/stdout.txt" "$dir/stderr.txt"; then
			leaked+="LEAK: the output of $(basename "$dir") holds a credential (${secret:0:6}…)"$'\n'
			leaks=$((leaks + 1))
		fi
	done < <(grep -ohE '"(access_token|refresh_token|code|client_secret)": *"[^"]+"' "$dir/checks.json" |
		sed -E 's/^.*: *"([^"]+)"$/\1/' | sort -u)
done
[ $leaks = 0 ] || status=1

# The runner's summary, with its check counts reworded so that no line reads
# like a test runner's closing "N passed, N failed".
summary=$(sed -n '/=== SUITE SUMMARY ===/,$p' "$log" | sed -e 's/\x1b\[[0-9;]*m//g' \
	-e 's/\([0-9]*\) passed, \([0-9]*\) failed/\1 checks ok, \2 checks failing/' | grep -v '^$')
echo "== conformance $name: runner $(node "$runner" --version) on node $(node --version)"
if [ -n "$summary" ]; then
	echo "$summary"
else
	tail -n 40 "$log"
fi
clean=$(grep -c '^✓ ' <<<"$summary")
failing=$(grep -c '^✗ ' <<<"$summary")
echo "full log: $log; per-scenario checks, stdout and stderr: $out/results-$name/"
printf '%s' "$leaked"
echo "== conformance $name: $clean scenarios clean, $failing with failing checks, baseline $held, $leaks credential leaks in the client's output (exit $status, $((SECONDS - start)) s)"
exit $status
