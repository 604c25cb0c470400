#!/usr/bin/env bash
# Static security scan of the Terraform JSON that fastscale synthesizes, with checkov.
#
# checkov lives in its own virtualenv (.venv-checkov, created on first use): its dependency pins
# conflict with the project's. Every file in examples/ is synthesized into a scratch directory and
# scanned as terraform_json. Suppressions are in .checkov.yaml, each with the reason it is safe.
#
# Usage: scripts/run_checkov.sh [CONFIG.yaml ...]   (default: every examples/*.yaml)
# Exit status: non-zero when a check fails or a step cannot run.
set -euo pipefail

CHECKOV_VERSION="3.3.30"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${CHECKOV_VENV:-$ROOT/.venv-checkov}"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
FASTSCALE="$ROOT/.venv/bin/fastscale"

if [[ ! -x "$VENV/bin/checkov" ]] || [[ "$("$VENV/bin/checkov" --version 2>/dev/null)" != "$CHECKOV_VERSION" ]]; then
    echo "installing checkov $CHECKOV_VERSION into $VENV" >&2
    "$PYTHON" -m venv --clear "$VENV"
    if ! "$VENV/bin/pip" install --quiet "checkov==$CHECKOV_VERSION" >"$VENV/install.log" 2>&1; then
        cat "$VENV/install.log" >&2
        echo "error: could not install checkov $CHECKOV_VERSION (log above)" >&2
        exit 2
    fi
fi

if [[ $# -gt 0 ]]; then
    configs=("$@")
else
    configs=("$ROOT"/examples/*.yaml)
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

status=0
for config in "${configs[@]}"; do
    name="$(basename "$config" .yaml)"
    out="$work/$name"
    "$FASTSCALE" synth "$config" --out "$out" --json >"$work/$name.json"
    stack_dir="$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["stack_dir"])' "$work/$name.json")"
    echo "== checkov: $name ($config)"
    if ! "$VENV/bin/checkov" --quiet --compact --framework terraform_json \
            --config-file "$ROOT/.checkov.yaml" --file "$stack_dir/cdk.tf.json"; then
        status=1
    fi
done
exit $status
