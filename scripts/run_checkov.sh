#!/usr/bin/env bash
# Static security scan of the Terraform JSON that fastscale synthesizes, with checkov.
#
# checkov lives in its own virtualenv (.venv-checkov, created on first use): its dependency pins
# conflict with the project's. Every file in examples/ and the projects `fastscale init` writes (its default
# workload, and one scaling to zero) are synthesized into a scratch directory and scanned as terraform_json.
# Suppressions are in .checkov.yaml (the same file `init` gives every project), each with the reason it is safe.
#
# Usage: scripts/run_checkov.sh [CONFIG.yaml ...]   (default: examples/*.yaml and the init projects)
#        scripts/run_checkov.sh --install           (only make sure checkov is installed; print its path)
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

if [[ "${1:-}" == "--install" ]]; then
    echo "$VENV/bin/checkov"
    exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [[ $# -gt 0 ]]; then
    configs=("$@")
else
    configs=("$ROOT"/examples/*.yaml)
    for variant in default scale-to-zero; do
        flags=()
        [[ "$variant" == scale-to-zero ]] && flags=(--scale-to-zero)
        "$FASTSCALE" init "$work/init-$variant" --project "init-$variant" --fastscale-requirement fastscale \
            "${flags[@]}" >/dev/null
        configs+=("$work/init-$variant/fastscale.yaml")
    done
fi

# One synth for every config (their stack names differ) and one checkov run over every stack: checkov's start-up
# is most of its time, and each file is still checked on its own (a finding names its file).
"$FASTSCALE" synth "${configs[@]}" --out "$work/out" --json >"$work/synth.json"
mapfile -t stacks < <("$PYTHON" - "$work/synth.json" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
for stack in summary.get("stacks", [summary]):
    print(stack["stack_dir"] + "/cdk.tf.json")
PY
)
if [[ ${#stacks[@]} -ne ${#configs[@]} ]]; then
    echo "error: synth wrote ${#stacks[@]} stack(s) for ${#configs[@]} config(s)" >&2
    exit 2
fi
for i in "${!configs[@]}"; do
    echo "== checkov: ${configs[$i]} -> ${stacks[$i]#"$work/"}"
done
"$VENV/bin/checkov" --quiet --compact --framework terraform_json --config-file "$ROOT/.checkov.yaml" --file "${stacks[@]}"
