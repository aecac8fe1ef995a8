#!/usr/bin/env bash
# The test of spcg_check.sh itself: runs $SPCG_PROGRAM with the arguments given and changes its
# residual after iteration 3 by one more digit; the rest of its output and its exit code are
# its own. spcg_check.sh must see the difference.
out=$("$SPCG_PROGRAM" "$@" 2>&1)
rc=$?
sed '/^iter    3 /s/e\([+-]\)/1e\1/' <<<"$out"
exit $rc
