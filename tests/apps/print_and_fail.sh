#!/bin/sh
# A "port" that prints the original's result (its arguments) and exits 1: examples_port.sh must
# report the exit code, not pass on the printed value alone.
echo "$@"
exit 1
