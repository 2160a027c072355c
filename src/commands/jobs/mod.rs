//! `cli-agent-mcp jobs`: the job store from a shell. Lists, shows, prints answers, asks a
//! job's server to cancel it, prunes. Exit codes: 0 done, 1 failed (unknown job, a job that
//! did not complete, a cancel that could not happen, a store that cannot be used), 2 usage
//! (a malformed id, from clap).

use std::io::{IsTerminal, Write};
use std::time::Duration;

use cli_agent_engine::git::disk_usage;

mod review;

use crate::args::{JobsAction, JobsArgs, JobsListArgs};
use crate::jobs::store::{
    CANCEL_WAIT, JobId, JobRecord, JobStatus, ListFilter, RemoteCancel, Store, StoreError,
    StoreSettings, TreeSummary, now_ms,
};

const EXIT_FAILED: u8 = 1;
/// Events per page when printing a transcript.
const TRANSCRIPT_PAGE: u64 = 1000;

#[derive(Debug, thiserror::Error)]
enum CommandError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write to stdout: {0}")]
    Stdout(#[from] std::io::Error),
    /// The job did not do what was asked of it: the message says what happened.
    #[error("{0}")]
    Failed(String),
    #[error(transparent)]
    Review(#[from] crate::jobs::review::ReviewError),
}

pub fn run(args: JobsArgs, settings: &StoreSettings) -> u8 {
    match execute(args, settings) {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("error: {error}");
            EXIT_FAILED
        }
    }
}

fn execute(args: JobsArgs, settings: &StoreSettings) -> Result<(), CommandError> {
    let store = Store::open_configured(settings)?;
    // What a killed server left "running" is shown as what it is: interrupted. (`cancel`
    // finds that out itself, and tells.)
    if !matches!(args.action, Some(JobsAction::Cancel { .. })) {
        store.interrupt_orphans()?;
    }
    let json = args.json;
    match args.action {
        None => list(&store, args.list, json),
        Some(JobsAction::Show { id }) => show(&store, &id, json),
        Some(JobsAction::Result { id, transcript }) if transcript => print_transcript(&store, &id),
        Some(JobsAction::Result { id, .. }) => print_result(&store, &id, json),
        Some(JobsAction::Cancel { id }) => cancel(&store, &id, json),
        Some(JobsAction::Diff { id, paths }) => review::diff(&store, &id, &paths, json),
        Some(JobsAction::Apply { id, check }) => review::apply(&store, &id, check, json),
        Some(JobsAction::Discard { id }) => review::discard(&store, &id, json),
        Some(JobsAction::Revert { id, check }) => review::revert(&store, &id, check, json),
        Some(JobsAction::Prune { older_than_days }) => {
            prune(&store, older_than_days, settings, json)
        }
    }
}

fn list(store: &Store, args: JobsListArgs, json: bool) -> Result<(), CommandError> {
    let jobs = store.list(&ListFilter {
        status: args.status,
        agent: args.agent,
        workspace: args
            .workspace
            .map(|dir| cli_agent_engine::plain_path::canonicalize(&dir).unwrap_or(dir)),
        limit: args.limit,
        offset: 0,
    })?;
    let mut out = std::io::stdout().lock();
    if json {
        return print_json(&mut out, &jobs);
    }
    if jobs.is_empty() {
        eprintln!("no jobs in {}", store.path().display());
        return Ok(());
    }
    writeln!(
        out,
        "{:<20}  {:<11}  {:<8}  {:>7}  {:>6}  WORKSPACE / PROMPT",
        "ID", "STATUS", "AGENT", "CREATED", "TOOK"
    )?;
    let now = now_ms();
    for job in &jobs {
        writeln!(
            out,
            "{:<20}  {:<11}  {:<8}  {:>7}  {:>6}  {}  {}",
            job.id.as_str(),
            job.status.name(),
            &job.agent,
            ago(now, job.created_ms),
            took(job, now),
            job.workspace.display(),
            one_line(&job.prompt_preview, 40),
        )?;
    }
    if let Some(footer) = worktrees_footer(store)? {
        eprintln!("{footer}");
    }
    Ok(())
}

fn show(store: &Store, id: &JobId, json: bool) -> Result<(), CommandError> {
    let job = store.get(id)?.ok_or_else(|| store_unknown(store, id))?;
    let mut out = std::io::stdout().lock();
    if json {
        return print_json(&mut out, &job);
    }
    writeln!(out, "{id}")?;
    for (name, value) in show_rows(&job, now_ms()) {
        writeln!(out, "  {name:<10}  {value}")?;
    }
    if let Some(tree) = &job.tree {
        for (name, value) in tree_rows(id, tree) {
            writeln!(out, "  {name:<10}  {value}")?;
        }
    }
    if let Some(allowed) = &job.allowed_past {
        writeln!(out, "  {:<10}  by you, past: {allowed}", "allowed")?;
    }
    if let Some(parked) = &job.waiting_for {
        let asked = parked.asked.replace('\n', "\n              ");
        writeln!(out, "  {:<10}  {asked}", "waits for")?;
        writeln!(
            out,
            "  {:<10}  answer it on the job's page: cli-agent-mcp dashboard",
            ""
        )?;
    }
    if let Some(error) = &job.error {
        let hint = error.hint.as_deref().unwrap_or("-");
        writeln!(
            out,
            "  {:<10}  {}: {} (hint: {hint})",
            "error",
            kind_name(error),
            error.message
        )?;
    }
    Ok(())
}

/// What `jobs show` says of a job, row by row, with the commands that print the rest.
fn show_rows(job: &JobRecord, now: u64) -> [(&'static str, String); 12] {
    let id = &job.id;
    let owner = if job.owner.is_alive() {
        "alive"
    } else {
        "gone"
    };
    let info = &job.transcript;
    let or_dash = |value: &Option<String>| value.clone().unwrap_or_else(|| "-".into());
    [
        ("status", job.status.name().to_owned()),
        ("agent", format!("{} ({})", job.agent, job.origin.name())),
        ("workspace", job.workspace.display().to_string()),
        ("permission", job.permission.to_string()),
        ("model", or_dash(&job.model)),
        (
            "created",
            format!("{} ago, took {}", ago(now, job.created_ms), took(job, now)),
        ),
        ("server", format!("pid {} ({owner})", job.owner.pid)),
        ("session", or_dash(&job.session_id)),
        ("progress", or_dash(&job.progress)),
        (
            "answer",
            format!(
                "{} characters: cli-agent-mcp jobs result {id}",
                job.answer_chars
            ),
        ),
        (
            "transcript",
            format!(
                "{} events, {} bytes; dropped {} events, {} bytes: cli-agent-mcp jobs result --transcript {id}",
                info.events, info.bytes, info.dropped_events, info.dropped_bytes
            ),
        ),
        ("prompt", one_line(&job.prompt_preview, 200)),
    ]
}

/// What `jobs show` says of a job's tree, with the commands that review it.
fn tree_rows(id: &JobId, tree: &TreeSummary) -> Vec<(&'static str, String)> {
    let mut rows = vec![("isolation", format!("{} ({})", tree.isolation, tree.state))];
    if let (Some(branch), Some(path)) = (&tree.branch, &tree.worktree) {
        rows.push(("worktree", format!("{} (branch {branch})", path.display())));
    }
    if let Some(files) = tree.files_changed {
        rows.push((
            "changes",
            format!(
                "{files} files (+{} -{}): cli-agent-mcp jobs diff {id}",
                tree.lines_added.unwrap_or(0),
                tree.lines_removed.unwrap_or(0)
            ),
        ));
    }
    rows
}

/// The worktrees of isolated jobs that still exist, and the disk they use.
fn worktrees_footer(store: &Store) -> Result<Option<String>, CommandError> {
    let live = store.live_worktrees()?;
    if live.is_empty() {
        return Ok(None);
    }
    let bytes: u64 = live.iter().map(|(_, path)| disk_usage(path)).sum();
    Ok(Some(format!(
        "{} worktrees of isolated jobs use {:.1} MiB under {}: review them (jobs diff ID), then \
         jobs apply ID or jobs discard ID",
        live.len(),
        bytes as f64 / (1024.0 * 1024.0),
        store.worktrees_dir().display()
    )))
}

/// The whole answer, exactly as the agent gave it; a job that did not complete also says why
/// on stderr and exits 1.
fn print_result(store: &Store, id: &JobId, json: bool) -> Result<(), CommandError> {
    let job = store.get(id)?.ok_or_else(|| store_unknown(store, id))?;
    if !job.status.is_finished() {
        return Err(CommandError::Failed(format!(
            "job {id} is still {}: no answer yet; `cli-agent-mcp jobs show {id}` shows its progress",
            job.status
        )));
    }
    let outcome = store.outcome(id)?;
    let mut out = std::io::stdout().lock();
    if json {
        print_json(
            &mut out,
            &serde_json::json!({ "job": job, "outcome": outcome }),
        )?;
    } else if let Some(outcome) = &outcome {
        out.write_all(outcome.answer.as_bytes())?;
        // Exactly the answer into a pipe or file; on a terminal, the prompt on a line of its own.
        if out.is_terminal() && !outcome.answer.is_empty() && !outcome.answer.ends_with('\n') {
            writeln!(out)?;
        }
        out.flush()?;
    }
    if job.status == JobStatus::Completed {
        return Ok(());
    }
    Err(CommandError::Failed(match &job.error {
        Some(error) => format!("job {id} {}: {}", job.status, error.message),
        None => format!("job {id} {} before it finished", job.status),
    }))
}

fn print_transcript(store: &Store, id: &JobId) -> Result<(), CommandError> {
    let mut out = std::io::stdout().lock();
    let mut offset = Some(0);
    while let Some(at) = offset {
        let page = store
            .transcript_page(id, at, TRANSCRIPT_PAGE)?
            .ok_or_else(|| store_unknown(store, id))?;
        out.write_all(page.text.as_bytes())?;
        offset = page.next_offset;
    }
    out.flush()?;
    Ok(())
}

fn cancel(store: &Store, id: &JobId, json: bool) -> Result<(), CommandError> {
    let cancel = store.cancel_and_wait(id, CANCEL_WAIT)?;
    let message = cancel.message(id);
    let mut out = std::io::stdout().lock();
    if json {
        print_json(&mut out, &cancel.to_json(id))?;
    } else if cancel == RemoteCancel::Cancelled {
        writeln!(out, "{message}")?;
    }
    if cancel == RemoteCancel::Cancelled {
        return Ok(());
    }
    Err(CommandError::Failed(message))
}

fn prune(
    store: &Store,
    days: Option<u64>,
    settings: &StoreSettings,
    json: bool,
) -> Result<(), CommandError> {
    let age = match days {
        Some(days) => Duration::from_secs(days.saturating_mul(24 * 3600)),
        None => settings.retention()?,
    };
    let days = age.as_secs() / (24 * 3600);
    let pruned = store.prune(age)?;
    let mut out = std::io::stdout().lock();
    if json {
        print_json(
            &mut out,
            &serde_json::json!({ "pruned": pruned, "older_than_days": days }),
        )
    } else {
        writeln!(
            out,
            "pruned {pruned} finished jobs older than {days} days from {}",
            store.path().display()
        )?;
        Ok(())
    }
}

fn print_json(out: &mut impl Write, value: &impl serde::Serialize) -> Result<(), CommandError> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}

fn store_unknown(store: &Store, id: &JobId) -> CommandError {
    CommandError::Store(store.unknown_job(id))
}

fn kind_name(error: &cli_agent_engine::ErrorInfo) -> String {
    serde_json::to_value(error.kind)
        .ok()
        .and_then(|kind| kind.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// How long the job ran (or has been running).
fn took(job: &JobRecord, now: u64) -> String {
    match (job.started_ms, job.finished_ms) {
        (Some(start), Some(end)) => duration(end.saturating_sub(start)),
        (Some(start), None) => format!("{}…", duration(now.saturating_sub(start))),
        (None, _) => "-".into(),
    }
}

fn ago(now: u64, then: u64) -> String {
    duration(now.saturating_sub(then))
}

/// `850ms`, `42s`, `7m`, `3h`, `2d`.
fn duration(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0 => format!("{ms}ms"),
        1..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

/// The text on one line, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}
