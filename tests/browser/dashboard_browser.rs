//! The dashboard in a real browser: headless Chromium (Debian's `chromium`) driven by
//! playwright-core (pinned in tests/browser, installed by scripts/install-browser.sh into
//! .tools/browser) through tests/browser/dashboard.mjs. An MCP server runs a slow background
//! job with the fake CLI; the browser sees it appear and its progress move, opens its page,
//! cancels it; then no process of it is left. Another job's answer shows as markdown, the raw
//! HTML in it as text. A job isolated in a worktree shows its disk use in the list and its
//! diff on its page (the HTML it added as text), and its apply button brings it in. Screenshots of each step are kept in
//! target/test-artifacts/dashboard/.
//!
//! Without chromium or playwright-core the test is skipped (see tests/support/src/web/browser.rs).

use crate::common;
use crate::web;

use common::{assert_none_tagged, temp_dir, unique};
use serde_json::json;
use web::browser::Browser;
use web::{Dashboard, GitRepo, background, server_on, streaming_job};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_browser_a_running_job_appears_moves_and_is_cancelled_from_its_page() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let state = temp_dir("dash-browser");
    let mut server = server_on(state.path()).await;
    let tag = unique("dash-browser");
    let id = streaming_job(&mut server, &tag).await;
    let answer = "**Done**:_fixed_`parse()`_<img_src=x_onerror=alert(1)>";
    let answered = background(&mut server, "claude", &format!("answer={answer}")).await;
    let repo = GitRepo::new();
    let edited = "line one\n<b>applied</b> by the button\n";
    let reviewed = repo.isolated_edit(&mut server, edited).await;
    let dashboard = Dashboard::start(state.path()).await;

    let url = dashboard.url();
    let env = [
        ("DASHBOARD_URL", url.as_str()),
        ("JOB_ID", &id),
        ("ANSWERED_ID", &answered),
        ("REVIEW_ID", &reviewed),
    ];
    let steps = [
        "01-list-shows-the-running-job",
        "02-list-progress-moves",
        "03-job-page-streams-events",
        "04-cancel-cancels-the-job",
        "05-phone-list",
        "06-phone-job",
        "07-answer-as-markdown",
        "08-list-shows-the-worktrees-disk-use",
        "09-job-page-shows-its-diff",
        "10-apply-brings-it-into-the-workspace",
    ];
    let context = || format!("server:\n{}", server.stderr());
    browser
        .run("dashboard.mjs", &env, "dashboard", &steps, context)
        .await;

    assert_eq!(repo.notes(), edited, "the button applied the job's edit");

    let waited = server
        .call("job_wait", json!({"job_ids": [&id], "timeout_secs": 30}))
        .await;
    assert_eq!(
        waited["structuredContent"]["jobs"][0]["status"], "cancelled",
        "{waited:#}"
    );
    assert_none_tagged(&tag);
}
