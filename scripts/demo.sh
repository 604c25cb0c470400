#!/usr/bin/env bash
# `make demo`: the main job on every bundled example (validate, synthesize, estimate), without an AWS account.
# One line per example; each example's full synth and estimate output is kept next to its Terraform, and the
# estimate of the AWS benchmark workload (qwen3-8b) is shown in full.
#   FASTSCALE  the fastscale executable (default .venv/bin/fastscale)
#   OUT        where the Terraform goes (default cdktf.out)
set -euo pipefail
cd "$(dirname "$0")/.."
fastscale=${FASTSCALE:-.venv/bin/fastscale}
out=${OUT:-cdktf.out}
shown=qwen3-8b

echo "== 1/3 validate every example"
"$fastscale" validate examples/*.yaml

echo
echo "== 2/3 synthesize and estimate each example (full output in $out/<example>/synth.txt and estimate.txt)"
for f in examples/*.yaml; do
  name=$(basename "$f" .yaml)
  mkdir -p "$out/$name"
  if ! "$fastscale" synth "$f" --out "$out/$name" >"$out/$name/synth.txt" 2>&1; then
    cat "$out/$name/synth.txt" >&2; echo "error: synth $f failed" >&2; exit 1
  fi
  if ! "$fastscale" estimate "$f" >"$out/$name/estimate.txt" 2>&1; then
    cat "$out/$name/estimate.txt" >&2; echo "error: estimate $f failed" >&2; exit 1
  fi
  stack=$(cd "$out/$name" && ls -d stacks/*/)
  echo "  ✓ $name: $out/$name/${stack}cdk.tf.json"
done

echo
echo "== 3/3 the estimate of examples/$shown.yaml (the AWS benchmark workload)"
cat "$out/$shown/estimate.txt"

cat <<EOF

Wrote $out/<example>/ for each example: stacks/<project>/cdk.tf.json (terraform -chdir=... plan reads it),
synth.txt and estimate.txt.
The CLI is $fastscale (or run \`source .venv/bin/activate\` and call \`fastscale\`).
Next, rehearse a deploy without an AWS account, against a local emulator (docs/emulator.md; needs terraform):
  .venv/bin/pip install -e '.[emulator]'                 # once: moto's server, which the emulator runs on
  fastscale emulator                                     # terminal 1, after source .venv/bin/activate
  fastscale init demo --emulator http://127.0.0.1:5000   # terminal 2, after source .venv/bin/activate
  cd demo && fastscale deploy fastscale.yaml --auto-approve
EOF
