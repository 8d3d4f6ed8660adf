//! The conformance suite that `tests/all/sqlite.rs` and `tests/all/postgres.rs` both run, on the
//! fresh databases of `store::testing`.

pub mod accounts;
pub mod alerts;
pub mod cases;
pub mod conformance;
pub mod discovery;
pub mod notices;
pub mod renders;
pub mod sites;
pub mod stats;
pub mod timestamps;

/// Declares one `#[tokio::test]` per conformance case, each on a fresh database from
/// `$fixture`. The list is written once, here, so both backends run all of it.
#[macro_export]
macro_rules! conformance_suite {
    ($fixture:path) => {
        $crate::conformance_tests!(
            $fixture;
            migrations_are_idempotent,
            work_round_trips_with_chapters_and_fingerprints,
            reimporting_the_same_content_finds_the_existing_work,
            concurrent_imports_of_one_work_store_it_once,
            a_long_import_lets_other_writers_in_and_stays_hidden,
            an_abandoned_import_is_hidden_then_removed,
            a_failed_work_insert_writes_nothing,
            a_work_without_chapters_is_refused,
            missing_rows_are_not_found,
            works_are_filtered_and_paged,
            deleting_a_work_removes_its_chapters_and_postings,
            postings_are_found_by_hash,
            fingerprints_are_paged_for_index_loads,
            index_entries_carry_every_posting_page_by_page,
            packed_postings_load_as_the_rows_do,
            work_changes_log_inserts_and_deletes_in_order,
            jobs_go_from_queued_to_done,
            a_running_worker_is_seen_until_it_stops,
            dedupe_keys_hold_while_a_job_is_live,
            due_time_and_priority_order_claims,
            failures_back_off_then_go_dead_and_can_be_retried,
            expired_leases_are_reaped_and_fenced,
            released_jobs_do_not_use_an_attempt,
            concurrent_claims_never_share_a_job,
            four_workers_run_2000_jobs_exactly_once,
            a_killed_workers_job_runs_again,
            an_always_failing_job_ends_dead_with_its_error,
            bad_payloads_and_permanent_errors_go_dead_at_once,
            shutdown_finishes_or_releases_running_jobs,
            long_jobs_see_the_shutdown_and_hand_themselves_back,
            a_panicking_handler_is_retried,
            schedules_enqueue_each_fire_time_once,
            counts_listing_and_purging,
            crawls_round_trip_and_change_status,
            crawl_totals_are_counted_from_what_is_stored,
            dead_runs_give_their_claims_back_at_once,
            frontier_dedups_orders_retries_and_finishes,
            the_page_budget_bounds_first_claims,
            expired_frontier_leases_come_back_and_are_fenced,
            concurrent_frontier_claims_never_share_an_entry,
            concurrent_pushes_of_shared_links_all_succeed,
            host_state_updates_are_serialised,
            evidence_bodies_are_stored_once,
            wire_bodies_are_kept_beside_decoded_ones_and_stored_once,
            the_latest_validated_response_is_found_by_either_url,
            a_revisit_names_its_capture_and_takes_its_digest,
            page_texts_are_stored_and_replaced,
            a_pages_matches_are_replaced_as_a_whole,
            crawls_are_listed_newest_first_by_status,
            a_crawls_detail_counts_what_is_stored,
            a_crawls_snapshots_are_read_by_url_page_by_page,
            works_are_retitled_with_an_audit_row,
            a_works_fingerprints_are_replaced_and_logged,
            a_work_with_cases_is_deleted_only_when_forced,
            cases_are_opened_widened_and_counted,
            recording_the_same_matches_twice_changes_nothing,
            counters_follow_a_snapshot_that_loses_its_matches,
            case_status_moves_are_checked_and_audited,
            removed_cases_reopen_only_for_copies_fetched_after_removal,
            dismissed_cases_reopen_only_for_a_new_chapter,
            licensed_domains_keep_matches_out_of_cases,
            reports_have_one_row_per_page_and_chapter,
            missing_cases_are_not_found,
            audit_rows_are_written_and_read_by_target,
            concurrent_recordings_open_one_case_and_count_every_page,
            watched_sites_round_trip_with_their_schedules,
            a_thousand_site_schedules_fire_once_across_two_processes,
            a_site_has_one_unfinished_crawl_however_many_start_one,
            notices_are_drafted_for_confirmed_cases_and_marked_sent_once,
            a_draft_is_edited_until_it_is_sent,
            a_mailed_notice_is_recorded_before_and_after_it_is_sent,
            setting_overrides_are_saved_cleared_and_audited,
            rechecks_remove_the_case_when_every_copy_is_gone,
            a_copy_back_up_is_reported_and_a_reviewed_case_stops_its_rechecks,
            timestamps_are_kept_once_per_snapshot_and_tsa,
            renders_keep_each_screenshot_once_and_the_newest_is_read,
            stats_count_detections_copies_and_review_from_the_counters,
            stats_sum_crawls_by_site,
            a_recrawl_adds_matches_but_no_new_copies,
            users_are_created_read_listed_and_kept_unique,
            user_changes_are_audited_and_the_last_admin_stays,
            sessions_live_until_they_expire_end_or_their_user_is_disabled,
            api_tokens_resolve_until_revoked_or_expired_and_note_use_sparingly,
            discovery_queries_cache_count_and_candidates_keep_their_status,
            alert_choices_pick_recipients_and_each_mail_is_sent_once,
            stored_webhooks_are_added_toggled_deleted_and_audited,
            searches_are_due_new_works_first_and_probes_are_recorded,
        );
    };
}

#[macro_export]
macro_rules! conformance_tests {
    ($fixture:path; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let Some(db) = $fixture(stringify!($name)).await else { return };
                common::conformance::$name(&db).await;
            }
        )*
    };
}
