#!/usr/bin/env bash
# The real npm client libraries the differential test runs (tests/support/node/package-lock.json), installed
# once per lockfile with `npm ci` into ~/.cache/callscope/node/<first 16 hex of the lockfile's sha256>/.
# node and npm come from Debian's `nodejs`/`npm` when missing. Prints the folder it installed into.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
lock="$here/tests/support/node/package-lock.json"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "Installing Debian's nodejs and npm (the differential test runs the npm client libraries)" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then SUDO="sudo"; else
      echo "Not root and no sudo: please install nodejs and npm (apt-get install)" >&2; exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q >/dev/null
  $SUDO apt-get install -y -q --no-install-recommends nodejs npm >/dev/null
fi
hash="$(sha256sum "$lock" | cut -c1-16)"
dest="${CALLSCOPE_NODE_CACHE:-$HOME/.cache/callscope/node}/$hash"
if [ ! -e "$dest/.installed" ]; then
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  cp "$here/tests/support/node/package.json" "$lock" "$dest.tmp/"
  (cd "$dest.tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  rm -rf "$dest" && mv "$dest.tmp" "$dest" && touch "$dest/.installed"
fi
echo "$dest"
