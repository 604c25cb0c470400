#!/usr/bin/env bash
# The node package of the resource layer (node/elements), built with the jsii compiler pinned in its
# package-lock.json, in a scratch directory so that node/elements holds only sources.
#
#   scripts/engine_elements.sh build   # write stacks/_jsii/<name>-<version>.tgz
#   scripts/engine_elements.sh check   # build, then compare every file with the shipped package (exit 1 if not equal)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}
case $mode in build|check) ;; *) echo "usage: $0 build|check" >&2; exit 2 ;; esac
command -v npm >/dev/null || { echo "error: npm (with node) is needed to build node/elements" >&2; exit 1; }

src=node/elements
name=$(node -p "require('./$src/package.json').name")
version=$(node -p "require('./$src/package.json').version")
shipped=stacks/_jsii/$name-$version.tgz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp "$src/package.json" "$src/package-lock.json" "$src/README.md" "$work/"
mkdir "$work/lib" "$work/out"
cp "$src/lib/index.ts" "$work/lib/"
(
  cd "$work"
  npm ci --no-audit --no-fund --loglevel=error >npm.log 2>&1 || { cat npm.log >&2; exit 1; }
  npx --no-install jsii >jsii.log 2>&1 || { cat jsii.log >&2; exit 1; }
  npm pack --loglevel=error --pack-destination out >/dev/null
)
built=$work/out/$name-$version.tgz

if [ "$mode" = build ]; then
  rm -f stacks/_jsii/"$name"-*.tgz
  cp "$built" "$shipped"
  echo "built $shipped"
  exit 0
fi

[ -f "$shipped" ] || { echo "error: $shipped is missing: run 'make engine-elements'" >&2; exit 1; }
mkdir "$work/a" "$work/b"
tar -xzf "$shipped" -C "$work/a"
tar -xzf "$built" -C "$work/b"
if ! diff -r "$work/a" "$work/b" >"$work/diff.txt"; then
  head -40 "$work/diff.txt" >&2
  echo "error: $shipped is not what node/elements builds: run 'make engine-elements' and commit the result" >&2
  exit 1
fi
echo "$shipped matches node/elements"
