"""The engine's node process runs with a small young generation (less memory), unless the user chose one."""

from __future__ import annotations

import os

from fastscale.stacks.engine_choice import NODE_SEMI_SPACE_MB, node_options


def test_the_young_generation_size_is_added_to_the_users_node_options():
    flag = f"--max-semi-space-size={NODE_SEMI_SPACE_MB}"
    assert node_options("") == flag
    assert node_options("--enable-source-maps") == f"--enable-source-maps {flag}"


def test_a_young_generation_size_chosen_by_the_user_is_kept():
    assert node_options("--max-semi-space-size=16") == "--max-semi-space-size=16"


def test_the_engine_starts_node_with_it():
    from fastscale.stacks import engine

    assert engine.ENGINE.module
    assert "--max-semi-space-size" in os.environ["NODE_OPTIONS"]  # ours, or the one the user chose
