#!/usr/bin/env bash
# Mutation testing with mutmut (configured in pyproject.toml's [tool.mutmut]), in a scratch tree.
#
# The source folders install as fastscale.* through a package-dir mapping, which mutmut cannot see: it derives
# a module's name from its path, and puts its mutated copy (mutants/) first on sys.path. So the run happens in
# .mutation/, where fastscale/infra is a link to infra/ (mutmut copies it to mutants/fastscale/infra and the
# mutants are named fastscale.infra.*, as the tests import them); tests/, examples/ and pyproject.toml are
# links too. fastscale.cli and the rest still come from the editable install and import the mutated infra.
# Every run starts afresh (no results of an earlier tree are reused), then prints the survivors and the score.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/.venv/bin}
WORK=$ROOT/.mutation
rm -rf "$WORK"
mkdir -p "$WORK/fastscale"
ln -s "$ROOT/infra" "$WORK/fastscale/infra"
for p in tests examples pyproject.toml; do ln -s "$ROOT/$p" "$WORK/$p"; done
cd "$WORK"
# All of sweep.py, cleanup.py and plan_session.py; of the rollout package (infra/terraform/rollout/), what decides
# that a plan is downtime (deploy refuses such a plan without --allow-downtime): parsing the plan, classifying its
# changes, the replacement's reason. MUTANTS="glob ..." picks others (mutmut's mutant-name globs).
set -f  # the globs are for mutmut, not the shell
# shellcheck disable=SC2206
MUTANTS=(${MUTANTS:-fastscale.infra.aws.sweep.* fastscale.infra.aws.cleanup.* fastscale.infra.terraform.plan_session.* fastscale.infra.terraform.rollout.plan.x_parse_plan__* fastscale.infra.terraform.rollout.classify.x_classify_change__* fastscale.infra.terraform.rollout.classify.x_classify_plan__* fastscale.infra.terraform.rollout.serving.x_replacement_reason__* fastscale.infra.terraform.rollout.classify.xǁPlanClassificationǁdowntime__*})
"$BIN/mutmut" run --max-children "${MUTATION_JOBS:-2}" "${MUTANTS[@]}" || true
"$BIN/mutmut" results --all true > results.txt
"$BIN/python" - "${MUTANTS[@]}" <<'PY'
import collections, fnmatch, pathlib, sys
counts = collections.Counter()
for line in pathlib.Path("results.txt").read_text().splitlines():
    name, _, status = line.strip().rpartition(": ")
    if name and any(fnmatch.fnmatch(name, glob) for glob in sys.argv[1:]):
        counts[status] += 1
print("mutmut:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
killed, total = counts["killed"], sum(counts.values())
print(f"score: {killed}/{total} killed ({100 * killed / max(total, 1):.0f}%)")
PY
