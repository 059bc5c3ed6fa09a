#!/usr/bin/env bash
# make fuzz: runs each fuzz target for FUZZTIME. A target fails the run only when it writes a
# failing input to its testdata/fuzz/<Target>/ folder (which then stays as a regression case).
#
# Go 1.26's fuzzing coordinator can report its own -fuzztime deadline as a failure, with
# "context deadline exceeded" and no input written (https://go.dev/issue/75804, fixed in Go
# 1.27). Such a run is reported as that race, not as a finding, and the next target still runs.
set -uo pipefail
# shellcheck source=lib/toolchain.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/toolchain.sh"
cd "$(dirname "$0")/.."
GO="${GO:-go}"
FUZZTIME="${FUZZTIME:-30s}"

targets=(
  "./pkg/admission FuzzReview"
  "./pkg/manifests FuzzDecode"
  "./pkg/rules FuzzEvaluate"
  "./pkg/rules/validation FuzzFormatPatterns"
)
found=0
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  corpus="${pkg#./}/testdata/fuzz/$name"
  before=$(ls "$corpus" 2>/dev/null | sort)
  log=$(mktemp)
  echo "fuzz: $name ($pkg) for $FUZZTIME"
  "$GO" test "$pkg" -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" 2>&1 | tee "$log" | grep -v '^fuzz: elapsed'
  status=${PIPESTATUS[0]}
  after=$(ls "$corpus" 2>/dev/null | sort)
  if [ "$status" -ne 0 ]; then
    if [ "$before" != "$after" ]; then
      echo "fuzz: $name FOUND a failing input, kept in $corpus: $(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')"
      found=1
    elif grep -q 'context deadline exceeded' "$log"; then
      echo "fuzz: $name ran its time; the failure above is Go's coordinator race at the deadline (go.dev/issue/75804), no input was written"
    else
      echo "fuzz: $name failed without writing an input; see the output above"
      found=1
    fi
  fi
  rm -f "$log"
done
exit $found
