#!/usr/bin/env bash
# The layer check (scripts/check-layers): the tree passes, and a planted
# include of an upper layer fails it, naming the file, line and layers --
# so the check is known to bite, not just to exit 0.
# Usage: tests/layer_check.sh <source dir>
set -euo pipefail
src=${1:?source dir}
"$src/scripts/check-layers" --root "$src"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/src" "$src/include" "$tmp/"
mkdir -p "$tmp/docs" && cp "$src/docs/architecture.md" "$tmp/docs/"
echo '#include "session/graph_state.h"' >> "$tmp/src/services/mbuf.cc"
if out=$("$src/scripts/check-layers" --root "$tmp"); then
  echo "layer_check: a services file including session passed the check" >&2
  exit 1
fi
echo "$out"
grep -q 'src/services/mbuf.cc:[0-9]*: layer `services` includes "session/graph_state.h" of layer `session`' <<<"$out"
# A folder the table does not list is refused too.
mkdir -p "$tmp/src/newlayer" && echo '' > "$tmp/src/newlayer/a.cc"
sed -i '/graph_state.h/d' "$tmp/src/services/mbuf.cc"
if out=$("$src/scripts/check-layers" --root "$tmp"); then
  echo "layer_check: an unlisted folder passed the check" >&2
  exit 1
fi
grep -q 'src/newlayer/: a folder the layers table' <<<"$out"
echo "layer_check: ok"
