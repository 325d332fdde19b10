#!/usr/bin/env bash
# Builds the sdist, unpacks it in a temporary directory and runs the quick test suite (make test-fast) from it:
# the sdist must hold everything the tests need (MANIFEST.in). The unpacked tree gets its own virtual
# environment (make test-fast installs plboost from it, with the test extra), so nothing is imported from
# this checkout. The tests read ../shared/data beside the repository root: a link to this checkout's
# ../shared is placed beside the unpacked tree when there is one.
#
# usage: scripts/check_sdist.sh [BUILD_PYTHON]
#   BUILD_PYTHON: an interpreter with the build package (the test extra has it); default python3
# environment: PYTHON, the interpreter the unpacked tree's virtual environment is made with (default python3);
#   KEEP=1 keeps the temporary directory (its path is printed).
set -euo pipefail

build_python=${1:-python3}
python=${PYTHON:-python3}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/plboost-sdist.XXXXXX")
if [[ "${KEEP:-0}" == 1 ]]; then
    echo "check-sdist: keeping $work"
else
    trap 'rm -rf "$work"' EXIT
fi
start=$SECONDS

echo "check-sdist: building the sdist in $work/dist"
"$build_python" -m build --sdist --outdir "$work/dist" "$repo"
sdist=$(ls "$work"/dist/plboost-*.tar.gz)
tar -xzf "$sdist" -C "$work"
tree=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'plboost-*')
if [[ -d "$repo/../shared" ]]; then
    ln -s "$(cd "$repo/../shared" && pwd)" "$work/shared"
else
    echo "check-sdist: no ../shared beside $repo; the tests that read its data will be skipped"
fi

echo "check-sdist: make test-fast in $tree"
# A fresh environment: the variables of an outer make (MAKEFLAGS, VENV) must not leak into this one.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u VENV make -C "$tree" test-fast PYTHON="$python"
echo "check-sdist: the sdist's tests passed in $((SECONDS - start)) s ($(basename "$sdist"))"
