"""The suite's tiers, assigned here and nowhere else (``tests/conftest.py`` applies them at collection):

- ``e2e``: tests that start another process: the CLI as a subprocess, an MLflow server, PostgreSQL,
  Chromium, a Ray cluster (its head node, or Ray in the test process, which starts its own GCS and
  workers), the notebook kernel, pip and the installed wheel, a fresh interpreter;
- ``docs``: the README's and the docs' figures, from runs on the real collections (SciFact, Cranfield,
  CISI) or on the shipped example, read out of the text they pin.

A test may be in both. Every tier runs in CI (``.ci/run`` runs the README's ``python -m pytest``, which
selects none); locally ``python -m pytest -m "not e2e and not docs"`` is the fast loop.
``tests/test_suite_rules.py`` checks that every test which starts a process is in ``e2e`` and that every
``e2e`` entry still starts one (``support.suite_rules.process_starters``), so the tier cannot rot.

Keys are paths under ``tests/``; a value is the module's tests in the tier (top-level functions or classes,
by name), or :data:`ALL` for the whole module.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
ALL: tuple[str, ...] = ()

E2E: dict[str, tuple[str, ...]] = {
    "benchmarks/test_benchmarks_smoke.py": (
        "test_benchmarks_smoke_evaluation_matches_each_peer_per_query",
        "test_benchmarks_smoke_significance_agrees_with_scipy_and_ranx",
        "test_benchmarks_smoke_ray_collections_workload_starts_ray_and_states_both_bounds",
        "test_benchmarks_smoke_scale_runs_every_job_on_a_tiny_comparison",
    ),
    "answers/test_answers_ui.py": ALL,
    "config/test_config_resources.py": (
        "test_a_model_that_is_not_on_this_machine_fails_at_once_naming_its_key",
        "test_a_hub_model_in_the_hugging_face_cache_is_found_offline_and_loads",
        "test_a_model_needs_sentence_transformers_installed",
        "test_a_split_without_qrels_is_refused_at_the_split_before_anything_runs",
        "test_a_wrong_backend_or_a_missing_onnx_file_is_one_located_line_before_any_run",
    ),
    "core/test_core_arrow_memory.py": ALL,
    "examples/test_examples_installed_wheel.py": ALL,
    "execution/test_execution_cluster.py": ALL,
    "execution/test_execution_config.py": ("test_the_local_backend_never_imports_ray",),
    "execution/test_execution_faults.py": ALL,
    "execution/test_execution_ray.py": (
        "test_the_fusion_sweep_on_an_in_process_ray_equals_local",
        "test_a_precomputed_run_is_read_in_the_driver_beside_ray_variants",
        "test_a_user_error_raised_in_a_ray_task_is_the_same_one_line",
        "test_ray_data_encoding_gives_the_local_vectors_bit_for_bit",
        "test_query_planning_on_ray_equals_local",
        "test_a_python_retriever_runs_in_the_driver_beside_ray_variants",
    ),
    "execution/test_execution_ray_evaluation.py": (
        "test_any_number_of_blocks_gives_the_drivers_table_bit_for_bit",
        "test_a_query_without_judgment_is_warned_once_in_the_driver",
        "test_the_ray_backend_shards_a_large_runs_evaluation_with_the_local_numbers",
        "test_bad_input_found_in_a_ray_task_is_the_local_path_s_one_line_error",
    ),
    "judging/test_judging_openai.py": (
        "test_a_real_server_grades_pairs_or_counts_them_unusable_and_reports_its_tokens",
        "test_a_wrong_path_on_a_real_server_is_refused_at_once",
        "test_answers_are_judged_through_a_real_server_with_the_support_prompt",
    ),
    "judging/test_judging_readme.py": ALL,
    "outcome/test_outcome_attribution.py": ("test_the_attribution_line_follows_its_verdict_in_every_view",),
    "outcome/test_outcome_report.py": (
        "test_the_report_table_puts_the_primary_row_first_as_the_console_does",
        "test_largest_wins_show_the_relevant_hit_at_rank_6",
        "test_the_description_table_is_a_markdown_table_not_a_code_block",
        "test_the_report_says_it_too",
        "test_a_collections_report_leads_back_to_the_comparison_across_collections",
    ),
    "retrieval/test_retrieval_embedding_models.py": (
        "test_int8_vectors_agree_with_fp32_on_every_chunk_of_the_example",
    ),
    "retrieval/test_retrieval_no_temp_files.py": ALL,
    "retrieval/test_retrieval_package.py": (
        "test_importing_the_retrieval_modules_does_not_import_torch_or_bm25s",
    ),
    "runner/test_browser.py": ALL,
    "runner/test_cli_bad_input.py": (
        "test_report_checks_its_output_before_reading_the_store",
        "test_an_unknown_well_formed_run_id_is_a_located_error",
        "test_ctrl_c_before_any_run_opened_says_so",
        "test_ctrl_c_with_runs_open_says_they_were_marked_killed",
        "test_ctrl_c_with_tracking_off_says_no_run_was_opened",
        "test_ctrl_c_in_pool_claims_nothing_about_mlflow",
    ),
    "runner/test_cli_in_process.py": ("test_in_process_and_console_script_say_the_same",),
    "runner/test_cli_query_planning.py": (
        "test_the_shipped_query_planning_config_gives_the_readme_verdicts",
    ),
    "runner/test_notebook.py": (
        "test_load_comparison_reads_the_latest_run_back",
        "test_analysis_notebook_executes_from_its_own_folder_and_finds_the_store_above",
    ),
    "runner/test_readme_command.py": ALL,
    "runner/test_readme_sample.py": ALL,
    "runner/test_readme_scenarios.py": (
        "test_each_row_states_the_verdict_its_config_gives",
        "test_no_row_shows_an_interval_its_verdict_contradicts_without_saying_why",
    ),
    "runner/test_runner_attribution.py": ALL,
    "runner/test_runner_bad_input.py": ("test_ctrl_c_marks_the_open_runs_killed",),
    "runner/test_runner_collections.py": (
        "test_on_ray_every_collection_is_in_flight_and_the_session_is_released_after_the_last",
    ),
    "runner/test_runner_cost.py": (
        "test_the_json_carries_a_cost_object_per_variant",
        "test_mlflow_holds_efficiency_on_every_run_and_the_ratios_on_the_treatments",
        "test_report_html_shows_the_cost_beside_the_verdict_also_rebuilt_from_mlflow",
        "test_the_console_prints_the_cost_line_under_the_verdict",
    ),
    "runner/test_runner_e2e.py": ALL,
    "runner/test_runner_faults.py": ALL,
    "runner/test_runner_judgments.py": (
        "test_the_shipped_example_raises_no_judgment_warning",
        "test_the_readme_loop_on_the_shipped_example_shows_what_the_readme_says",
    ),
    "runner/test_runner_postgres.py": ALL,
    "runner/test_runner_robustness.py": (
        "test_json_mlflow_and_the_report_carry_the_range_and_the_queries_needed",
    ),
    "runner/test_runner_scifact.py": (
        "test_holm_on_the_same_tables_finds_the_readme_count",
        "test_the_statistics_docs_scifact_paragraph_is_this_run",
    ),
    "runner/test_runner_scifact_models.py": (  # the README's command is read through bash (shell_words)
        "test_the_row_states_the_runs_verdict_recall_and_model_size",
        "test_the_prose_under_the_table_is_the_runs",
        "test_the_int8_prose_is_the_runs",
    ),
    "runner/test_runner_server.py": ALL,
    "runner/test_runner_shipped_configs.py": ("test_chunk_sizes_are_compared_by_evidence_spans",),
    "runner/test_runner_sweep.py": (
        "test_the_grid_lists_every_candidate_best_first_with_its_settings_and_cost",
        "test_the_tuned_comparison_reports_the_choice_made_without_the_queries_it_scores",
        "test_the_tuned_comparison_gives_the_readme_sentence_and_figures",
        "test_the_best_point_has_the_readme_adjusted_p_under_max_t_and_under_holm",
        "test_every_grid_point_is_a_child_run_with_its_settings_as_params",
    ),
    "runner/test_runner_verdict.py": ALL,
    "test_docs_site.py": ALL,
    "test_environment.py": (
        "test_a_missing_part_fails_a_ci_run_and_is_skipped_elsewhere_naming_what_to_install",
        "test_a_ci_run_without_python_parts_stops_before_the_first_test_naming_each",
    ),
    "test_hypothesis_profiles.py": ALL,
    "tracking/test_tracking_collections.py": (
        "test_the_top_run_holds_the_pooled_comparison",
        "test_each_collection_is_nested_laid_out_as_a_single_comparison",
        "test_load_comparison_reads_both_levels",
        "test_the_top_report_links_each_collection_run",
        "test_each_collection_report_leads_back_to_the_top_run",
        "test_abcompare_report_on_the_top_run",
        "test_a_collection_failing_half_way_leaves_nothing_running",
    ),
    "tracking/test_tracking_faults.py": (
        "test_a_process_is_alive_only_while_it_is_the_same_process",
        "test_runs_left_running_by_dead_processes_of_this_host_are_marked_failed",
        "test_only_real_scratch_folders_of_dead_processes_are_removed",
    ),
    "tracking/test_tracking_layout.py": (
        "test_the_parent_run_holds_the_comparison",
        "test_each_variant_run_holds_its_settings_means_tables_and_hits",
        "test_a_treatment_run_is_named_with_its_primary_comparison_and_searchable_by_its_variant",
        "test_a_treatment_run_carries_its_comparison_with_the_control",
        "test_the_experiment_opens_in_the_classic_view_with_the_headline_columns",
        "test_what_is_written_is_what_analysis_reads",
        "test_every_view_lists_the_primary_row_first",
        "test_abcompare_report_writes_the_latest_comparison_and_refuses_an_unknown_run",
        "test_a_sweep_parent_logs_the_tuned_figures_and_sentence_the_readme_names",
        "test_a_sweep_parent_holds_the_grid_the_held_out_table_and_the_pareto_plot",
        "test_the_logged_grid_is_the_json_grid_best_first",
        "test_the_held_out_table_scores_each_query_by_the_choice_of_its_fold",
        "test_the_pareto_plot_marks_every_candidate_and_labels_the_front",
    ),
    "tracking/test_tracking_hits_artifact.py": ALL,  # the shared example run, on the session's server
    "tracking/test_tracking_metrics_as_computed.py": ALL,
}

DOCS: dict[str, tuple[str, ...]] = {
    "examples/test_examples_docs_levels.py": ALL,
    "judging/test_judging_readme.py": ALL,
    "retrieval/test_retrieval_rm3_collections.py": ALL,
    "retrieval/test_retrieval_scifact.py": ALL,
    "runner/test_readme_ci.py": ("test_the_readme_ci_example_prints_what_the_readme_says",),
    "runner/test_readme_figures.py": ALL,
    "runner/test_readme_sample.py": ALL,
    "runner/test_readme_scenarios.py": ALL,
    "runner/test_runner_collections_readme.py": ALL,
    "runner/test_runner_judgments.py": (
        "test_the_readme_loop_on_the_shipped_example_shows_what_the_readme_says",
    ),
    "runner/test_runner_scifact.py": ALL,
    "runner/test_runner_scifact_models.py": ALL,
}

TIERS: dict[str, dict[str, tuple[str, ...]]] = {"e2e": E2E, "docs": DOCS}


def entries(tier: dict[str, tuple[str, ...]]) -> Iterable[tuple[str, str | None]]:
    """(module path, test name or None for the whole module) of every entry of a tier."""
    for path, names in tier.items():
        if names == ALL:
            yield path, None
        else:
            yield from ((path, name) for name in names)


def in_tier(tier: dict[str, tuple[str, ...]], path: str, name: str) -> bool:
    """Whether the top-level test ``name`` (a function or a class) of the module ``path`` is in ``tier``."""
    names = tier.get(path)
    return names is not None and (names == ALL or name in names)


def mark(items: list[pytest.Item]) -> None:
    """Add each collected test's tier markers (``pytest_collection_modifyitems``)."""
    for item in items:
        try:
            path = Path(str(item.path)).resolve().relative_to(TESTS).as_posix()
        except ValueError:  # collected outside tests/
            continue
        cls = item.getparent(pytest.Class)
        name = cls.name if cls is not None else getattr(item, "originalname", item.name)
        for tier, listed in TIERS.items():
            if in_tier(listed, path, name):
                item.add_marker(getattr(pytest.mark, tier))
