"""Which tests need what: the markers and the order that ``tests/conftest.py`` applies.

A marker says what a test needs or costs, so that a developer can leave it out
(``pytest -m "not slow and not browser and not ray"``); ``make test`` runs them all.

- ``ray``: everything under ``tests/ray/`` (a local Ray cluster).
- ``browser``, ``npm``, ``postgres``, ``sandbox``: found from what the test calls. The
  names the test function and its fixtures refer to are followed through the test
  helpers (functions and classes defined under ``tests/``), and a test that reaches one of
  the names below gets the marker. Tests that reach the sandbox only through a
  ``jurat`` subprocess (a campaign with ``[checks.python]`` tests) cannot be found that
  way: they are listed in ``SANDBOX_FILES`` and ``SANDBOX_TESTS``, from a run that logged
  which tests started bwrap.
- ``slow``: the tests marked so in their files, plus ``SLOW_TESTS`` and ``SLOW_FILES``:
  those that took 5 s or more (setup included) in a whole run on the 2-core machine.

A parametrized fixture is not followed: it marks its own parameters (the ledger's
``target`` marks its PostgreSQL parameter ``postgres``).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["apply_marks"]

BY_NAME: dict[str, frozenset[str]] = {
    "browser": frozenset({"open_page", "sync_playwright", "CHROMIUM"}),
    "npm": frozenset({"npm_packages"}),
    "postgres": frozenset({"fresh_database", "pg_engine", "PG_URL", "require_postgres",
                           "pg_available", "pg_target"}),
    "sandbox": frozenset({"run_tests", "run_checks", "run_checks_async", "check_command",
                          "RunGroup", "controller_dirs", "cgroups_of"}),
}

# Files every test of which starts bwrap (directly, through a module fixture, or through a
# `jurat` subprocess); paths from the repository root.
SANDBOX_FILES: frozenset[str] = frozenset({"tests/ray/test_ray.py"})

# Single tests (file::function, any parameters) that start bwrap through a subprocess.
SANDBOX_TESTS: frozenset[str] = frozenset({
    "tests/checks/test_cli.py::test_module_entry_point",
    "tests/cli/test_check_campaign.py::test_a_candidate_outside_the_campaign_uses_its_checks_python",
    "tests/cli/test_check_campaign.py::test_with_campaign_the_hard_gates_decide_as_jurat_run_does",
    "tests/cli/test_run_economy.py::test_judge_after_veto_asks_and_marks_the_judges_overruled",
    "tests/cli/test_run_economy.py::test_no_request_reaches_the_judge_for_a_vetoed_artifact",
    "tests/cli/test_serve_commands.py::test_adjudicate_settles_an_escalation_of_jurat_run",
    "tests/docs/test_tutorial.py::test_every_command_exits_as_the_tutorial_says",
    "tests/ray/test_ray.py::test_sandboxed_tests_run_on_the_ray_workers",
    "tests/ray/test_ray.py::test_serve_runs_each_job_as_a_ray_task",
    "tests/ray/test_ray.py::test_code_artifacts_survive_a_killed_worker",
    "tests/ray/test_ray.py::test_without_an_address_a_local_runtime_starts_and_stops",
    "tests/receipts/test_doc_verifier.py::test_every_receipt_rederives_field_by_field",
    "tests/report/test_report_ledger_browser.py::test_the_report_of_a_ledger_in_chromium",
    "tests/runner/test_run_families.py::test_one_family_escalates_three_families_accept",
    "tests/runner/test_run_forged_pass.py::test_forged_passes_are_rejected",
    "tests/runner/test_run_postgres.py::test_rubric_quickstart_on_postgres_resumes_without_resampling",
    "tests/runner/test_run_rubric.py::test_always_accept_judge_never_accepts_a_failing_test",
    "tests/runner/test_run_rubric.py::test_quickstart_rubric_run_verifies_and_vetoes",
    "tests/runner/test_run_rubric.py::test_replay_and_report",
    "tests/runner/test_run_rubric.py::test_second_run_reuses_receipts_and_changed_artifact_supersedes",
    "tests/runner/test_run_rubric.py::test_telemetry_has_one_event_per_sample",
    "tests/service/test_adjudication.py::test_a_rationale_quoting_the_hidden_tests_is_refused",
    "tests/service/test_adjudication.py::test_an_adjudication_cannot_lift_a_failed_required_gate",
    "tests/service/test_adjudication.py::test_escalate_adjudicate_and_verify",
    "tests/service/test_adjudication.py::test_jurat_adjudicate_on_the_command_line",
    "tests/service/test_docs.py::test_the_walk_through_runs_as_written",
    "tests/service/test_postgres.py::test_the_service_on_postgresql",
    "tests/service/test_references.py::test_the_hidden_tests_reach_no_contributor_visible_output",
    "tests/test_taint.py::test_judge_prompts_keep_the_candidate_in_data_blocks_and_the_hidden_tests_out",
    "tests/test_taint.py::test_the_run_exercised_every_stage",
})

# file::function (any parameters) of tests that took 5 s or more (setup included) in a
# whole run with the machine loaded by other work (load average 4 to 9 on 2 cores).
SLOW_TESTS: frozenset[str] = frozenset({
    "tests/board/test_board_browser.py::test_the_board_renders_downloads_verify_and_stays_on_its_origin",
    "tests/calibrate/test_calibrate.py::test_the_sim_panel_agrees_with_gold_as_its_reliability_predicts",
    "tests/checks/test_humaneval.py::test_broken_variants_fail_with_the_right_outcome",
    "tests/checks/test_humaneval.py::test_canonical_solutions_pass_the_full_pipeline",
    "tests/docs/test_tutorial.py::test_every_command_exits_as_the_tutorial_says",
    "tests/ledger/test_ledger_concurrency.py::test_processes_append_without_gaps",
    "tests/ledger/test_ledger_fault.py::test_sigkill_never_loses_a_reported_commit_postgresql",
    "tests/ledger/test_ledger_fault.py::test_sigkill_never_loses_a_reported_commit_sqlite",
    "tests/ledger/test_ledger_group_fault.py::test_sigkill_during_group_commit_loses_no_acknowledged_append_postgresql",
    "tests/ledger/test_ledger_group_fault.py::test_sigkill_during_group_commit_loses_no_acknowledged_append_sqlite",
    "tests/ledger/test_ledger_store.py::test_entries_iterates_across_batches",
    "tests/ledger/test_ledger_tiles.py::test_tiles_and_bundles_hold_the_tree_and_the_entries",
    "tests/receipts/test_canonical_fast.py::test_fast_path_writes_rfc8785_bytes",
    "tests/receipts/test_canonical_fast.py::test_same_json_is_the_recursive_rule",
    "tests/receipts/test_doc_verifier.py::test_every_receipt_rederives_field_by_field",
    "tests/report/test_report_ledger_browser.py::test_the_report_of_a_ledger_in_chromium",
    "tests/runner/test_reference_material.py::test_gold_answers_reach_no_contributor_visible_output",
    "tests/runner/test_run_curtailment.py::test_curtailed_run_decides_as_the_full_run_with_fewer_calls",
    "tests/runner/test_run_families.py::test_one_family_escalates_three_families_accept",
    "tests/runner/test_run_forged_pass.py::test_forged_passes_are_rejected",
    "tests/runner/test_run_kinds.py::test_criteria_quickstart",
    "tests/runner/test_run_kinds.py::test_sigint_then_rerun_resamples_nothing",
    "tests/runner/test_run_reasoning_depth.py::test_reasoning_depth_rubric_runs_and_verifies",
    "tests/runner/test_run_rubric.py::test_quickstart_rubric_run_verifies_and_vetoes",
    "tests/runner/test_run_rubric.py::test_replay_and_report",
    "tests/runner/test_run_rubric.py::test_second_run_reuses_receipts_and_changed_artifact_supersedes",
    "tests/runner/test_run_workers.py::test_a_worker_that_dies_stops_the_run_and_the_same_command_resumes",
    "tests/runner/test_run_workers.py::test_two_workers_decide_exactly_as_one_process",
    "tests/runner/test_run_workers.py::test_workers_stop_when_their_parent_is_killed_and_the_run_resumes",
    "tests/service/test_docs.py::test_the_walk_through_runs_as_written",
    "tests/service/test_openapi.py::test_generated_requests_reach_the_handlers_and_keep_the_schema",
    "tests/service/test_openapi.py::test_the_api_keeps_its_schema",
    "tests/service/test_postgres.py::test_the_service_on_postgresql",
    "tests/service/test_restart.py::test_sigkill_with_50_jobs_in_flight_then_restart",
    "tests/signer/test_signer_granted.py::test_a_granted_settlement_recovers_with_eth_account_and_ethers",
    "tests/signer/test_signer_once.py::test_three_ids_with_the_same_bytes_get_one_settlement",
    "tests/test_taint.py::test_judge_prompts_keep_the_candidate_in_data_blocks_and_the_hidden_tests_out",
    "tests/test_taint.py::test_the_run_exercised_every_stage",
})

# Files all of whose tests are slow (a module fixture that takes the time).
SLOW_FILES: frozenset[str] = frozenset({"tests/checks/test_hostile.py", "tests/ray/test_ray.py"})

# Seconds each file took in that run (10 s or more): files are run longest first, so that
# on several workers (xdist) no long file starts last while the other workers are idle.
FILE_SECONDS: dict[str, int] = {
    "tests/checks/test_humaneval.py": 142,
    "tests/ledger/test_ledger_fault.py": 104,
    "tests/ray/test_ray.py": 102,
    "tests/service/test_openapi.py": 80,
    "tests/ledger/test_ledger_group_fault.py": 77,
    "tests/signer/test_signer_refusals.py": 43,
    "tests/runner/test_run_kinds.py": 38,
    "tests/runner/test_run_rubric.py": 35,
    "tests/checks/test_hostile.py": 34,
    "tests/docs/test_tutorial.py": 33,
    "tests/runner/test_run_paths.py": 31,
    "tests/signer/test_signer_granted.py": 31,
    "tests/service/test_restart.py": 30,
    "tests/runner/test_run_workers.py": 25,
    "tests/receipts/test_doc_verifier.py": 24,
    "tests/board/test_board_browser.py": 21,
    "tests/report/test_report_ledger_browser.py": 21,
    "tests/runner/test_run_endpoints.py": 20,
    "tests/receipts/test_canonical_fast.py": 18,
    "tests/test_taint.py": 18,
    "tests/runner/test_run_forged_pass.py": 18,
    "tests/service/test_docs.py": 16,
    "tests/checks/test_pipeline.py": 15,
    "tests/runner/test_run_curtailment.py": 14,
    "tests/calibrate/test_calibrate.py": 12,
    "tests/runner/test_reference_material.py": 12,
    "tests/ledger/test_ledger_store.py": 11,
    "tests/checks/test_answers.py": 11,
    "tests/signer/test_signer_once.py": 11,
    "tests/runner/test_run_bias_monitor.py": 11,
    "tests/ledger/test_ledger_concurrency.py": 10,
}

def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _is_helper(value: Any) -> bool:
    """A function or class defined in the test tree (followed), not jurat's or a library's."""
    module = getattr(value, "__module__", None) or ""
    return (module == "tests" or module.startswith("tests.") or module == "conftest"
            or module.endswith(".conftest"))


class _Names:
    """The names a function refers to, followed through the test helpers it calls."""

    def __init__(self) -> None:
        self._seen: dict[int, frozenset[str]] = {}

    def of(self, func: Any, depth: int = 0) -> frozenset[str]:
        func = inspect.unwrap(func) if callable(func) else func
        if isinstance(func, type):
            found: set[str] = set()
            for member in vars(func).values():
                member = getattr(member, "__func__", member)
                if isinstance(member, types.FunctionType):
                    found |= self.of(member, depth + 1)
            return frozenset(found)
        code = getattr(func, "__code__", None)
        if not isinstance(code, types.CodeType) or depth > 6:
            return frozenset()
        if id(code) in self._seen:
            return self._seen[id(code)]
        self._seen[id(code)] = frozenset()  # recursion guard
        names: set[str] = set()
        for each in _code_objects(code):
            names.update(each.co_names)
        scope = getattr(func, "__globals__", {})
        for name in list(names):
            value = scope.get(name)
            if value is not None and value is not func and _is_helper(value):
                names |= self.of(value, depth + 1)
        result = frozenset(names)
        self._seen[id(code)] = result
        return result


def _fixture_funcs(item: pytest.Item) -> Iterable[Any]:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    funcs = []
    for name in info.names_closure:
        for fixturedef in info.name2fixturedefs.get(name, ()):
            if fixturedef.params is None:
                funcs.append(fixturedef.func)
    return funcs


def _key(rel: str, item: pytest.Item) -> str:
    name = getattr(item, "originalname", None) or item.name.split("[", 1)[0]
    return f"{rel}::{name}"


def _relative(config: pytest.Config, item: pytest.Item) -> str:
    path = Path(item.path).resolve()
    try:
        return path.relative_to(config.rootpath).as_posix()
    except ValueError:
        return path.as_posix()


def apply_marks(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add the markers above to ``items``, and put the longest files
    first (a stable sort: the order within a file, and of the other files, is kept)."""
    names = _Names()
    items.sort(key=lambda item: -FILE_SECONDS.get(_relative(config, item), 0))
    for item in items:
        rel = _relative(config, item)
        key = _key(rel, item)
        found: set[str] = set()
        for func in (getattr(item, "function", None), *_fixture_funcs(item)):
            if func is not None:
                found |= names.of(func)
        wanted: set[str] = {mark for mark, hits in BY_NAME.items() if found & hits}
        if rel.startswith("tests/ray/"):
            wanted.add("ray")
        if rel in SANDBOX_FILES or key in SANDBOX_TESTS:
            wanted.add("sandbox")
        if key in SLOW_TESTS or rel in SLOW_FILES:
            wanted.add("slow")
        have = {mark.name for mark in item.iter_markers()}
        for mark in sorted(wanted - have):
            item.add_marker(getattr(pytest.mark, mark))
