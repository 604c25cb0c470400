"""The pipelines `fastscale init --ci github|gitlab` writes: clean under real linters (zizmor, actionlint with
shellcheck, GitLab's CI schema), and no cloud credential or OIDC token for a job that runs the repository's code.

A pull request can change any file of the repository. These tests read the generated files as data (YAML) and
run the scripts they hold where that can be done offline: the plan comment with hostile plan text, the
Terraform download with a checksum that does not match, the config read from git when it is a link.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from markdown_it import MarkdownIt

from fastscale.cli.main import cli
from fastscale.infra.base import catalog
from fastscale.infra.project import pipeline
from fastscale.infra.project.scaffold import CI_FILES, ProjectOptions, model_choices, render_project
from tests.cli.support import needs_binary, run
from tests.cli.test_plan_cost_cli import money, month, plan_scenario

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PROJECT = "demo-llm"
SHA = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+@[0-9a-f]{40}$")
#: What running the repository's code looks like in a script: a command of its Makefile, an install of its
#: requirements (any `-r` without hash checking), its tests, its cdktf app.
RUNS_REPOSITORY_CODE = re.compile(
    r"(?:^|&&|;|\|)\s*(?:make|pytest|cdktf|python3?\s+main\.py)\b"
    r"|pip install\b(?![^\n]*--require-hashes)[^\n]*(?:\s-r\s|--requirement\b)",
    re.M,
)


def tool(name: str) -> str:
    """A linter from the dev extra, beside this interpreter (not skipped when missing: `make setup` installs it)."""
    path = BIN / name
    assert path.exists(), f"{name} is not installed in {BIN}: run make setup (pyproject.toml's dev extra)"
    return str(path)


class _GitLabLoader(yaml.SafeLoader):
    """GitLab's `!reference [job, key]`, kept as a marker so scripts can be resolved the way GitLab does."""


class Reference(tuple):
    pass


_GitLabLoader.add_constructor("!reference", lambda loader, node: Reference(loader.construct_sequence(node)))


@pytest.fixture(scope="module")
def projects(tmp_path_factory) -> dict[str, Path]:
    """One project per pipeline, written by the command itself."""
    made = {}
    for ci in ("github", "gitlab"):
        target = tmp_path_factory.mktemp(ci) / "proj"
        result = CliRunner().invoke(cli, ["init", str(target), "--project", PROJECT, "--ci", ci,
                                          "--fastscale-requirement", "fastscale==0.1.0"])
        assert result.exit_code == 0, result.output
        made[ci] = target
    return made


@pytest.fixture(scope="module")
def github(projects) -> dict:
    return yaml.safe_load((projects["github"] / CI_FILES["github"]).read_text())


@pytest.fixture(scope="module")
def gitlab(projects) -> dict:
    return yaml.load((projects["gitlab"] / CI_FILES["gitlab"]).read_text(), Loader=_GitLabLoader)


def _steps_text(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job.get("steps", []))


def _uses(job: dict) -> list[str]:
    return [step["uses"] for step in job.get("steps", []) if "uses" in step]


def _gitlab_script(pipeline_doc: dict, job: dict) -> str:
    """The job's script as GitLab runs it: every `!reference` replaced by what it names."""
    lines: list[str] = []

    def add(items):
        for item in items:
            if isinstance(item, Reference):
                target = pipeline_doc
                for key in item:
                    target = target[key]
                add(target)
            elif isinstance(item, list):
                add(item)
            else:
                lines.append(item)

    add(job.get("script", []))
    return "\n".join(lines)


def _gitlab_jobs(doc: dict) -> dict[str, dict]:
    return {name: job for name, job in doc.items()
            if isinstance(job, dict) and not name.startswith(".") and "stage" in job}


# -- every variant ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ci", ["github", "gitlab"])
def test_the_pipeline_is_the_same_for_every_preset(ci):
    """The linters below run on one render per pipeline: that covers every --model preset and --scale-to-zero,
    since none of them changes the pipeline file."""
    base = ProjectOptions(project=PROJECT, ci=ci, fastscale_requirement="fastscale==0.1.0")
    reference = render_project(base)[CI_FILES[ci]]
    for model in model_choices():
        for scale_to_zero in (False, True):
            opts = replace(base, model=model, scale_to_zero=scale_to_zero)
            assert render_project(opts)[CI_FILES[ci]] == reference, (model, scale_to_zero)


@pytest.mark.parametrize("ci", ["github", "gitlab"])
def test_an_emulator_project_has_no_pipeline(tmp_path, ci):
    """--emulator writes no pipeline, and refuses --ci github|gitlab (exit 2, nothing written)."""
    target = tmp_path / "proj"
    result = CliRunner().invoke(cli, ["init", str(target), "--project", PROJECT, "--emulator",
                                      "http://127.0.0.1:5000", "--ci", ci])
    assert result.exit_code == 2, result.output
    assert "--emulator" in result.output and not target.exists()
    result = CliRunner().invoke(cli, ["init", str(target), "--project", PROJECT, "--emulator", "http://127.0.0.1:5000"])
    assert result.exit_code == 0, result.output
    assert not any((target / rel).exists() for rel in CI_FILES.values())


# -- the real linters -------------------------------------------------------------------------------------------


def _zizmor(workflow: Path) -> list[dict]:
    run = subprocess.run([tool("zizmor"), "--offline", "--no-config", "--persona", "pedantic", "--format", "json",
                          str(workflow)], capture_output=True, text=True, timeout=120)
    assert run.returncode in (0, 10, 11, 12, 13, 14), run.stderr  # 1x: findings of that severity
    return json.loads(run.stdout)


def _serious(findings: list[dict]) -> list[tuple[str, str]]:
    return [(f["ident"], f["determinations"]["severity"]) for f in findings
            if f["determinations"]["severity"] in ("Medium", "High")]


def test_zizmor_finds_nothing_of_medium_or_above(projects, tmp_path):
    workflow = projects["github"] / CI_FILES["github"]
    findings = _zizmor(workflow)
    assert _serious(findings) == [], findings
    # The same audit does see what the workflow avoids: a tag instead of a commit, a PR title in a script.
    text = workflow.read_text()
    pin = pipeline.ACTIONS["checkout"]
    worse = text.replace(pin.uses, f"{pin.repository}@v4", 1).replace(
        "cd \"$RUNNER_TEMP/fastscale/project\"", "echo \"${{ github.event.pull_request.title }}\"", 1)
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.write_text(worse)
    assert {"unpinned-uses", "template-injection"} <= {ident for ident, _ in _serious(_zizmor(bad))}


def test_actionlint_with_shellcheck_is_clean(projects, tmp_path):
    shellcheck = tool("shellcheck")
    workflow = projects["github"] / CI_FILES["github"]
    run = subprocess.run([tool("actionlint"), "-no-color", "-shellcheck", shellcheck, str(workflow)],
                         capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    # shellcheck is really consulted: an unquoted variable in a run: script is reported.
    bad = tmp_path / "bad.yml"
    bad.write_text(workflow.read_text().replace('cd "$RUNNER_TEMP/fastscale/project"', "cd $RUNNER_TEMP/x", 1))
    run = subprocess.run([tool("actionlint"), "-no-color", "-shellcheck", shellcheck, str(bad)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "shellcheck" in run.stdout and "SC2086" in run.stdout, run.stdout


def test_gitlab_ci_schema_accepts_the_pipeline(projects, tmp_path):
    def check(path: Path) -> subprocess.CompletedProcess:
        return subprocess.run([tool("check-jsonschema"), "--builtin-schema", "vendor.gitlab-ci",
                               "--data-transform", "gitlab-ci", str(path)], capture_output=True, text=True, timeout=120)

    pipeline_file = projects["gitlab"] / CI_FILES["gitlab"]
    run = check(pipeline_file)
    assert run.returncode == 0, run.stdout + run.stderr
    # The schema is really applied: an ID token given as a list is refused.
    bad = tmp_path / ".gitlab-ci.yml"
    bad.write_text(pipeline_file.read_text().replace("aud: sts.amazonaws.com", "- sts.amazonaws.com", 1))
    assert check(bad).returncode == 1


# -- GitHub: who holds what -------------------------------------------------------------------------------------


def test_github_grants_nothing_by_default_and_each_job_names_its_permissions(github):
    assert github["permissions"] == {}
    for name, job in github["jobs"].items():
        assert isinstance(job.get("permissions"), dict), name
        assert set(job["permissions"].values()) <= {"read", "write"}, name


def test_github_jobs_that_run_repository_code_get_no_credentials(github):
    runs_code = {name for name, job in github["jobs"].items() if RUNS_REPOSITORY_CODE.search(_steps_text(job))}
    assert {"check", "canary"} <= runs_code
    for name in runs_code:
        job = github["jobs"][name]
        assert "id-token" not in job["permissions"], name
        assert job["permissions"] == {"contents": "read"}, name
        assert not [u for u in _uses(job) if "configure-aws-credentials" in u], name
        assert "ROLE_ARN" not in json.dumps(job), name


def test_github_jobs_with_a_role_run_only_fastscale_from_the_lock(github):
    credentialed = {name: job for name, job in github["jobs"].items()
                    if job["permissions"].get("id-token") == "write"}
    assert set(credentialed) == {"plan", "deploy", "teardown"}
    for name, job in credentialed.items():
        script = _steps_text(job)
        assert not RUNS_REPOSITORY_CODE.search(script), (name, RUNS_REPOSITORY_CODE.search(script))
        installs = re.findall(r"pip install[^\n]*", script)
        assert installs == [f"pip install --quiet --require-hashes --requirement {pipeline.LOCK_FILE}"], name
        # The lock and the config are read from git objects, not from files a checkout wrote.
        assert f'show "HEAD:{pipeline.LOCK_FILE}"' in script and 'show "HEAD:$FASTSCALE_CONFIG"' in script, name
        assert job["env"]["PYTHONSAFEPATH"] == "1", name
        # Credentials come last: after everything that installs, right before fastscale runs.
        steps = job["steps"]
        assume = next(i for i, s in enumerate(steps) if "configure-aws-credentials" in s.get("uses", ""))
        assert all("fastscale " in s.get("run", "") or "upload-artifact" in s.get("uses", "")
                   for s in steps[assume + 1:]), name


def test_github_plan_uses_the_read_only_role_and_only_the_config_of_the_pull_request(github):
    plan = github["jobs"]["plan"]
    assert "pull_request" in plan["if"] and "head.repo.full_name == github.repository" in plan["if"]
    assert "environment" not in plan
    role = next(s["with"]["role-to-assume"] for s in plan["steps"] if "configure-aws-credentials" in s.get("uses", ""))
    assert role == "${{ vars.AWS_PLAN_ROLE_ARN }}"
    checkouts = [s["with"] for s in plan["steps"] if s.get("uses", "").startswith("actions/checkout@")]
    trusted, pr = checkouts
    assert trusted["ref"] == pipeline.MAIN_BRANCH and trusted["sparse-checkout"] == pipeline.LOCK_FILE
    assert "ref" not in pr and pr["sparse-checkout"] == "${{ env.FASTSCALE_CONFIG }}"
    script = _steps_text(plan)
    assert f'git -C trusted show "HEAD:{pipeline.LOCK_FILE}"' in script
    assert 'git -C pr show "HEAD:$FASTSCALE_CONFIG"' in script
    assert "fastscale plan fastscale.yaml" in script
    # Posting is another job: the one with the plan role cannot write to the pull request.
    assert set(plan["permissions"]) == {"contents", "id-token"}
    comment = github["jobs"]["comment"]
    assert comment["permissions"] == {"pull-requests": "write"} and comment["needs"] == "plan"
    assert not [u for u in _uses(comment) if "checkout" in u or "aws-credentials" in u]


def test_github_deploy_role_only_on_main_in_the_protected_environment(github):
    for name, job in github["jobs"].items():
        roles = [s["with"]["role-to-assume"] for s in job["steps"] if "configure-aws-credentials" in s.get("uses", "")]
        if "${{ vars.AWS_DEPLOY_ROLE_ARN }}" in roles:
            assert name in ("deploy", "teardown")
            assert job["environment"] == pipeline.GITHUB_ENVIRONMENT, name
            assert f"github.ref == 'refs/heads/{pipeline.MAIN_BRANCH}'" in job["if"], name
            assert job["concurrency"] == {"group": f"fastscale-{PROJECT}", "cancel-in-progress": False}, name
    assert github["jobs"]["deploy"]["if"].startswith("github.event_name == 'push'")
    assert "inputs.teardown" in github["jobs"]["teardown"]["if"]


def test_github_actions_are_pinned_by_commit_and_checkouts_keep_no_credentials(github, projects):
    text = (projects["github"] / CI_FILES["github"]).read_text()
    pins = {pin.uses for pin in pipeline.ACTIONS.values()}
    for name, job in github["jobs"].items():
        for step in job["steps"]:
            if "uses" not in step:
                continue
            assert SHA.match(step["uses"]), (name, step["uses"])
            if step["uses"].startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, name
        assert "concurrency" in job, name
    # Each `uses:` line carries the release its commit belongs to, as pipeline.ACTIONS records it.
    lines = {line.split("uses: ", 1)[1] for line in text.splitlines() if "uses: " in line}
    assert lines <= pins and lines, lines - pins


def test_github_run_scripts_hold_no_expressions(github):
    """Values reach scripts through `env:`, never pasted into the script by `${{ }}`."""
    for name, job in github["jobs"].items():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), (name, step)


# -- GitLab: who holds what -------------------------------------------------------------------------------------


def test_gitlab_id_tokens_only_where_fastscale_alone_runs(gitlab):
    jobs = _gitlab_jobs(gitlab)
    with_token = {name for name, job in jobs.items() if "id_tokens" in job}
    assert with_token == {"plan", "deploy", "teardown"}
    for name, job in jobs.items():
        script = _gitlab_script(gitlab, job)
        if RUNS_REPOSITORY_CODE.search(script):
            assert name not in with_token and "ROLE_ARN" not in script, name
            continue
        assert name in with_token, name
        assert job["id_tokens"] == {"AWS_OIDC_TOKEN": {"aud": pipeline.AUDIENCE}}, name
        assert re.findall(r"pip install[^\n]*", script) == [
            f"pip install --quiet --require-hashes --requirement {pipeline.LOCK_FILE}"], name
        assert f'git show "$LOCK_REV:{pipeline.LOCK_FILE}"' in script, name
        assert 'git show "$CI_COMMIT_SHA:$FASTSCALE_CONFIG"' in script, name
        assert job["variables"]["PYTHONSAFEPATH"] == "1", name
    assert {"check", "canary"} <= set(jobs) - with_token


def test_gitlab_plan_role_on_merge_requests_deploy_role_on_the_protected_default_branch(gitlab):
    jobs = _gitlab_jobs(gitlab)
    plan = _gitlab_script(gitlab, jobs["plan"])
    assert 'export AWS_ROLE_ARN="$AWS_PLAN_ROLE_ARN"' in plan and "AWS_DEPLOY_ROLE_ARN" not in plan
    assert [r["if"] for r in jobs["plan"]["rules"]] == ['$CI_PIPELINE_SOURCE == "merge_request_event" && $AWS_PLAN_ROLE_ARN']
    # The plan's lock is the default branch's, fetched: not the merge request's.
    assert plan.index('git fetch --quiet --depth=1 origin "$CI_DEFAULT_BRANCH"') < plan.index('LOCK_REV="$(git rev-parse FETCH_HEAD)"')
    for name in ("deploy", "teardown"):
        script = _gitlab_script(gitlab, jobs[name])
        assert 'export AWS_ROLE_ARN="$AWS_DEPLOY_ROLE_ARN"' in script and "AWS_PLAN_ROLE_ARN" not in script
        for rule in jobs[name]["rules"]:
            assert "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH" in rule["if"], name
            assert '$CI_COMMIT_REF_PROTECTED == "true"' in rule["if"], name
            assert "merge_request" not in rule["if"], name
        assert jobs[name]["resource_group"] == f"fastscale-{PROJECT}"
    assert jobs["teardown"]["rules"][0]["when"] == "manual"
    # Credentials are set up after everything that installs.
    for name in ("plan", "deploy", "teardown"):
        script = _gitlab_script(gitlab, jobs[name])
        assert script.index("AWS_WEB_IDENTITY_TOKEN_FILE") > script.index("sha256sum -c") > script.index("pip install")


# -- the scripts, run -------------------------------------------------------------------------------------------


def _comment_script(github: dict) -> str:
    return next(s["run"] for s in github["jobs"]["comment"]["steps"] if "gh pr comment" in s.get("run", ""))


HOSTILE_PLANS = {
    "closes a three-backtick fence": "Plan: 1 to add\n```\n# Approved\n[click](https://example.com)\n```\n",
    "closes with a long fence": "x\n``````````\n<img src=x onerror=alert(1)>\n",
    "backticks inside a line": "name: `a` ``b`` ```c``` ````d````\n",
    "a tilde fence and html": "~~~\n</code></pre><script>alert(1)</script>\n~~~~\n",
    "no final newline": "ends without a newline ```",
    "indented closing fence": "ok\n   ````\n    `````\n",
    "empty": "",
}


@pytest.mark.parametrize("plan_text", list(HOSTILE_PLANS.values()), ids=list(HOSTILE_PLANS))
def test_the_posted_plan_stays_one_code_block_whatever_it_holds(github, tmp_path, plan_text):
    body = _post(github, tmp_path, plan_text)
    tokens = [t for t in MarkdownIt("commonmark").parse(body) if t.level == 0]
    assert [t.type for t in tokens] == ["heading_open", "heading_close", "fence"], body
    fence = tokens[-1]
    assert fence.info == "" and fence.content == plan_text + ("\n" if plan_text and not plan_text.endswith("\n") else "")


def test_a_plan_too_long_for_a_comment_is_cut_and_still_one_code_block(github, tmp_path):
    plan_text = ("resource `x` " + "`" * 40 + "\n") * 10_000
    body = _post(github, tmp_path, plan_text)
    tokens = [t for t in MarkdownIt("commonmark").parse(body) if t.level == 0]
    assert [t.type for t in tokens][:3] == ["heading_open", "heading_close", "fence"]
    assert tokens[2].content.rstrip("\n") == plan_text[:60000].rstrip("\n")
    assert "plan artifact" in body.split(tokens[2].markup)[-1]
    assert len(body) < 65536


@needs_binary
def test_the_posted_plan_carries_the_monthly_cost_of_the_change(github, gitlab, tmp_path, runtime, project, aws):
    """What the plan job writes to plan.txt is `fastscale plan`'s stdout as a pipe gets it (no COLUMNS): the cost
    section is in it, and the comment job posts it inside the one code block; GitLab's plan.txt is the same
    stdout, shown on the merge request as the job's exposed artifact."""
    github_plan = _steps_text(github["jobs"]["plan"])
    assert re.search(r"^fastscale plan fastscale\.yaml > plan\.txt$", github_plan, re.M)
    gitlab_plan = _gitlab_script(gitlab, _gitlab_jobs(gitlab)["plan"])
    assert 'fastscale plan fastscale.yaml > "$CI_PROJECT_DIR/plan.txt"' in gitlab_plan
    assert _gitlab_jobs(gitlab)["plan"]["artifacts"] == {"expose_as": "fastscale plan", "paths": ["plan.txt"]}

    plan_scenario(runtime, aws, "counts")  # demo-chat's scalable target: 1-4 -> 2-8 instances of ml.g6.2xlarge
    result = run("plan", "fastscale.yaml")
    assert result.exit_code == 0, result.output
    ci = tmp_path / "ci"
    ci.mkdir()
    body = _post(github, ci, result.stdout)
    tokens = [t for t in MarkdownIt("commonmark").parse(body) if t.level == 0]
    assert [t.type for t in tokens] == ["heading_open", "heading_close", "fence"], body
    posted = tokens[-1].content
    assert posted == result.stdout
    assert f"Cost per month (on-demand prices of us-east-1 as of {catalog.as_of()}; excludes storage, data transfer, " \
           "CloudWatch):" in posted
    before, after = month("ml.g6.2xlarge", 1, 4), month("ml.g6.2xlarge", 2, 8)
    for label, fleet, figures in (("before", "1-4", before), ("after", "2-8", after)):
        row = rf"^  {label} +{fleet} x ml\.g6\.2xlarge +" + " +".join(re.escape(money(x)) for x in figures) + "$"
        assert re.search(row, posted, re.M), posted
    delta = [a - b for a, b in zip(after, before, strict=True)]
    assert (f"This change adds {money(delta[1])}/month at typical load ({money(delta[0], True)} at min, "
            f"{money(delta[2], True)} at max).") in posted


def _recorder(tmp_path: Path, command: str, option: str, copy: str) -> Path:
    """A directory holding a stand-in for `command` that runs `cp <copy>` when it meets `option` (whose value
    is then "$2"), and does nothing else. Returns the directory, to put first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    stand_in = bin_dir / command
    stand_in.write_text(f'#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = {option} ] && cp {copy}; shift; done\n')
    stand_in.chmod(0o755)
    return bin_dir


def _post(github: dict, tmp_path: Path, plan_text: str) -> str:
    """Run the comment job's script with `gh` replaced by a recorder; return the body it posted."""
    bin_dir = _recorder(tmp_path, "gh", "--body-file", '"$2" "$GH_OUT"')
    work = tmp_path / "job"
    work.mkdir()
    (work / "plan.txt").write_text(plan_text)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GH_OUT": str(tmp_path / "posted.md"),
           "GH_TOKEN": "t", "PR_NUMBER": "7", "GITHUB_REPOSITORY": "o/r", "LC_ALL": "C"}
    run = subprocess.run(["bash", "-e", "-c", _comment_script(github)], cwd=work, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return (tmp_path / "posted.md").read_text()


def _terraform_snippet(gitlab: dict) -> str:
    return "\n".join(gitlab[".terraform"]["script"])


def test_the_terraform_download_is_refused_unless_its_checksum_is_the_pinned_one(gitlab, github, tmp_path):
    snippet = _terraform_snippet(gitlab)
    assert pipeline.TERRAFORM_SHA256 in snippet
    # GitHub's jobs run the same lines.
    for name in ("check", "plan", "deploy", "teardown"):
        assert snippet.split("export PATH")[0].strip() in _steps_text(github["jobs"][name]), name
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("terraform", "#!/bin/sh\necho planted\n")
    good = archive.getvalue()
    for served, expect_ok in ((good, True), (good + b"tampered", False)):
        served_file = tmp_path / "served.zip"
        served_file.write_bytes(served)
        bin_dir = _recorder(tmp_path, "curl", "-o", '"$SERVED" "$2"')  # serves that file whatever URL is asked for
        script = snippet.replace(pipeline.TERRAFORM_SHA256, hashlib.sha256(good).hexdigest())
        script += '\necho "TF=$tf_dir/terraform"\n'
        env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "SERVED": str(served_file)}
        run = subprocess.run(["bash", "-e", "-c", script], env=env, capture_output=True, text=True, timeout=60)
        if expect_ok:
            assert run.returncode == 0, run.stderr
            binary = Path(run.stdout.split("TF=")[1].strip())
            assert binary.is_file() and os.access(binary, os.X_OK)
        else:
            assert run.returncode != 0 and "TF=" not in run.stdout
            assert "FAILED" in run.stdout + run.stderr


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=60)


def _read_step(github: dict) -> str:
    return next(s["run"] for s in github["jobs"]["plan"]["steps"] if s.get("name", "").startswith("Read the lock"))


def test_the_config_is_read_from_git_as_data_even_when_the_pull_request_makes_it_a_link(github, tmp_path):
    if shutil.which("git") is None:
        pytest.fail("git is needed: the pipelines read files with git show")
    secret = tmp_path / "secret.txt"
    secret.write_text("AWS_SECRET_ACCESS_KEY=do-not-print\n")
    trusted, pr, runner_temp = tmp_path / "trusted", tmp_path / "pr", tmp_path / "runner"
    for repo in (trusted, pr):
        repo.mkdir()
        _git(repo, "init", "-q")
    (trusted / pipeline.LOCK_FILE).write_text("fastscale==0.1.0 --hash=sha256:00\n")
    _git(trusted, "add", ".")
    _git(trusted, "commit", "-q", "-m", "lock")
    (pr / "fastscale.yaml").symlink_to(secret)
    _git(pr, "add", ".")
    _git(pr, "commit", "-q", "-m", "a link")
    runner_temp.mkdir()
    env = {"PATH": os.environ["PATH"], "RUNNER_TEMP": str(runner_temp), "FASTSCALE_CONFIG": "fastscale.yaml"}
    run = subprocess.run(["bash", "-e", "-c", _read_step(github)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    read = runner_temp / "fastscale" / "project" / "fastscale.yaml"
    assert not read.is_symlink() and read.read_text() == str(secret), "the link's text, never its target"
    assert (runner_temp / "fastscale" / pipeline.LOCK_FILE).read_text().startswith("fastscale==0.1.0")
    # Without a lock on main the job stops and says what to do.
    _git(trusted, "rm", "-q", pipeline.LOCK_FILE)
    _git(trusted, "commit", "-q", "-m", "no lock")
    run = subprocess.run(["bash", "-e", "-c", _read_step(github)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and f"::error::{pipeline.LOCK_FILE} is missing" in run.stdout


# -- the policies the README and the docs give ------------------------------------------------------------------


def _json_blocks(markdown: str) -> list[dict]:
    """The IAM policies among the JSON code blocks (others hold JSON lines or results)."""
    policies = []
    for token in MarkdownIt("commonmark").parse(markdown):
        if token.type == "fence" and token.info == "json" and '"Statement"' in token.content:
            policies.append(json.loads(token.content))
    return policies


@pytest.mark.parametrize("ci", ["github", "gitlab"])
def test_the_readme_gives_both_trust_policies_and_a_read_only_plan_role(projects, ci):
    readme = (projects[ci] / "README.md").read_text()
    blocks = _json_blocks(readme)
    trusts = [b for b in blocks if b["Statement"][0].get("Action") == "sts:AssumeRoleWithWebIdentity"]
    subjects = [next(v for cond in t["Statement"][0]["Condition"].values() for k, v in cond.items()
                     if k.endswith(":sub")) for t in trusts]
    if ci == "github":
        assert subjects == ["repo:OWNER/REPO:pull_request", "repo:OWNER/REPO:environment:production"]
    else:
        assert subjects == ["project_path:GROUP/PROJECT:ref_type:branch:ref:*",
                            "project_path:GROUP/PROJECT:ref_type:branch:ref:main"]
    for trust in trusts:
        assert any(k.endswith(":aud") and v == pipeline.AUDIENCE
                   for cond in trust["Statement"][0]["Condition"].values() for k, v in cond.items())
    (permissions,) = [b for b in blocks if b not in trusts]
    _assert_read_only(permissions, state=f"arn:aws:s3:::{PROJECT}-tfstate/fastscale/{PROJECT}.tfstate")
    assert "AWS_PLAN_ROLE_ARN" in readme and "AWS_DEPLOY_ROLE_ARN" in readme and "make lock" in readme
    if ci == "gitlab":
        assert "**protected** CI/CD variable" in readme


def _assert_read_only(policy: dict, state: str) -> None:
    for statement in policy["Statement"]:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        writes = [a for a in actions if re.search(r":(Create|Delete|Update|Put|Register|Deregister|Pass|Tag|Untag|"
                                                   r"Attach|Detach|Invoke|Start|Stop|Set|Modify)", a)]
        if writes:
            assert writes == ["s3:PutObject", "s3:DeleteObject"], writes
            assert statement["Resource"] == f"{state}.tflock", "the plan role writes only the lock object"
        assert "*" not in "".join(actions), actions


def test_the_docs_give_the_same_plan_role_and_trust_policies(projects):
    docs = (ROOT / "docs" / "ci-cd.md").read_text()
    blocks = _json_blocks(docs)
    (permissions,) = [b for b in blocks if any(s.get("Sid") == "ReadTheStack" for s in b["Statement"])]
    read = next(s for s in permissions["Statement"] if s["Sid"] == "ReadTheStack")
    assert read["Action"] == list(pipeline.PLAN_READ_ACTIONS), "docs/ci-cd.md and pipeline.PLAN_READ_ACTIONS"
    _assert_read_only(permissions, state="arn:aws:s3:::my-org-terraform-state/fastscale/chat-prod.tfstate")
    subjects = {v for b in blocks for s in b["Statement"] for cond in s.get("Condition", {}).values()
                for k, v in cond.items() if k.endswith(":sub")}
    expected = {sub for ci in ("github", "gitlab") for _, sub in pipeline.oidc_subjects(ci).values()}
    assert subjects == {s.replace("OWNER/REPO", "my-org/my-llm").replace("GROUP/PROJECT", "my-group/my-llm")
                        for s in expected}
