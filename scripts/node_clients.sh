#!/usr/bin/env bash
# The npm packages the tests run (the client libraries of the differential test, the opencode agent), each
# folder's committed package-lock.json installed once with `npm ci` into
# ~/.cache/callscope/node/<first 16 hex of the lockfile's sha256>/ (CALLSCOPE_NODE_CACHE overrides the root).
# Usage: node_clients.sh [FOLDER...] (default: tests/support/node, the differential test's client libraries). Prints each folder it installed into.
# node and npm come from Debian's `nodejs`/`npm` when missing.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
[ "$#" -gt 0 ] || set -- tests/support/node
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "Installing Debian's nodejs and npm (the tests run npm client libraries and an agent)" >&2
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
for folder in "$@"; do
  src="$here/$folder"
  lock="$src/package-lock.json"
  [ -f "$lock" ] || { echo "no $folder/package-lock.json" >&2; exit 1; }
  hash="$(sha256sum "$lock" | cut -c1-16)"
  dest="${CALLSCOPE_NODE_CACHE:-$HOME/.cache/callscope/node}/$hash"
  if [ ! -e "$dest/.installed" ]; then
    rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
    cp "$src/package.json" "$lock" "$dest.tmp/"
    # no install scripts: a package's binary is found where npm put it (tests/support/node_packages.py)
    (cd "$dest.tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    rm -rf "$dest" && mv "$dest.tmp" "$dest" && touch "$dest/.installed"
  fi
  echo "$dest"
done
