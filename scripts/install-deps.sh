#!/usr/bin/env bash
# Installs the Debian packages compas builds, tests and measures with, when any is missing.
# Safe to run again: does nothing when everything is present. Needs root (or sudo) to install.
set -euo pipefail

packages=(
  g++ gfortran cmake ninja-build pkg-config git  # gfortran: the Fortran module (fortran/)
  ccache  # a rebuild of the same sources (another clone, another preset run) reuses objects
  libhwloc-dev hwloc  # hwloc: lstopo draws the study's picture of the machine
  libucx-dev ucx-utils
  libssl-dev  # libcrypto: the bootstrap proves the job token with HMAC-SHA256
  libpapi-dev papi-tools
  libbenchmark-dev libgtest-dev libgmock-dev
  libopenmpi-dev openmpi-bin
  libcli11-dev nlohmann-json3-dev libfmt-dev
  libopenblas-dev
  python3 python3-matplotlib
  chromium  # tests open the study's report.html in a headless browser
  likwid
  clang libclang-rt-14-dev  # the libFuzzer targets (fuzz preset)
  # The one-node Slurm the slurm tests start (tests/slurm/slurm_node.sh). Slurm's mpi/pmix plugin
  # dlopen()s the unversioned libpmix.so, which Debian ships only in libpmix-dev.
  slurmd slurmctld slurm-client munge libpmix-dev
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "compas: installing missing Debian packages: ${missing[*]}" >&2
if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "compas: not root and no sudo; install these packages first: ${missing[*]}" >&2
  exit 2
fi
export DEBIAN_FRONTEND=noninteractive
# The packages' own services (munged, slurmd, slurmctld) must not start: the slurm tests run their
# daemons from a state directory of their own. policy-rc.d is honoured by invoke-rc.d and
# deb-systemd-invoke; an existing one is left as it is.
policy=/usr/sbin/policy-rc.d
made_policy=0
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\n# temporary: compas scripts/install-deps.sh is installing packages\nexit 101\n' |
    "${sudo[@]}" tee "$policy" >/dev/null && "${sudo[@]}" chmod 755 "$policy" && made_policy=1
fi
status=0
{ "${sudo[@]}" apt-get update -qq &&
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
  status=$?
[[ $made_policy -eq 1 ]] && "${sudo[@]}" rm -f "$policy"
exit $status
