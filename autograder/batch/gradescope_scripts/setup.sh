#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image
# (choose an Ubuntu 22.04 base image: it packages Python 3.11, which the
# engine and the pins in requirements.lock need).  The zip is unpacked to
# /autograder/source, the project root of one lab; run_autograder then uses
# the Python installed here.
set -euo pipefail

SOURCE=/autograder/source
VENV=/opt/ironlaw  # run_autograder knows this path

# On Gradescope the CPU wheel of torch comes from the PyTorch CPU index: set
# TORCH_INDEX_URL to that index's address before uploading (or export it).
# Left empty, pip takes torch 2.13.0 from the default index: the larger CUDA
# build, which grades the same on CPU.  requirements.lock's torch==2.13.0 also
# matches the CPU index's 2.13.0+cpu.
TORCH_INDEX_URL="${TORCH_INDEX_URL:-}"

export DEBIAN_FRONTEND=noninteractive
apt-get update
# libseccomp2: pyseccomp loads it; without it the seccomp layer is missing
# (and every result says so in extra_data.isolation).
apt-get install -y --no-install-recommends python3.11 python3.11-venv libseccomp2

# The sandbox drops the worker to an unprivileged uid (no user account is
# needed: any uid works).  That uid must still reach Python and its packages,
# or the sandbox refuses to grade (autograder/sandbox/worker.py): Gradescope
# has no namespaces, so the fallback that keeps uid 0 is unavailable.  Hence
# a venv on the system Python in a world-readable prefix, never under /root.
umask 022
/usr/bin/python3.11 -m venv "$VENV"
"$VENV/bin/pip" install --upgrade pip
"$VENV/bin/pip" install -c "$SOURCE/requirements.lock" ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"} "$SOURCE"
chmod -R a+rX "$VENV"

# Without namespaces, file modes are what hide the reference, the hidden tests
# and the results from the worker's uid.  run_autograder repeats this for
# folders Gradescope creates at run time.
mkdir -p /autograder/results
chmod 700 /autograder "$SOURCE" /autograder/results
