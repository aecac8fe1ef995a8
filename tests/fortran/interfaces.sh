#!/usr/bin/env bash
# fortran.interfaces: the module's interfaces as installed source (fortran/src/
# compas_interfaces.f90) agree with the module built: interfaces_check.f90 assigns each procedure
# that is not generic to a pointer of its documented interface and calls the generic ones with
# every documented keyword; both compiled against the module's .mod files (-fsyntax-only). A
# difference (an argument, a type, a rank, an intent, an optional one) is a compile error.
# Usage: interfaces.sh FC MODDIR INTERFACES CHECK
set -u
fc=$1 moddir=$2 interfaces=$3 check=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if "$fc" -std=f2018 -fsyntax-only -I"$moddir" -J"$tmp" "$interfaces" "$check"; then
  echo PASS
else
  echo "FAIL: $interfaces does not match the module compas"
  exit 1
fi
