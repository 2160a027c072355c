//! The server's instructions (`initialize`, `server/discover`): how every agent tool works,
//! said once here rather than in each tool (the host's model reads every tool's text with
//! each request), and which CLIs are not installed, with how to install them.

use super::tools::{Catalogue, LOOK_EVERY};

const HOW_CALLS_WORK: &str = "Each agent tool runs one coding-agent CLI headless on `prompt` \
    (passed as text, never as flags) and returns its answer with a structured outcome: status, \
    session_id, usage, error and hint. What every agent tool's arguments mean:\n\
    - workspace: the directory the agent works in (default: the server's); it must be inside \
    the directories the server allows.\n\
    - permission: read-only (default) reads files and runs read-only commands, never writes; \
    workspace-write edits files and runs commands in the workspace; unlimited may do anything \
    anywhere (only on a disposable machine). Levels above the server's ceiling \
    (workspace-write unless set) are refused.\n\
    - session_id: every call starts a fresh conversation that knows nothing of earlier calls, \
    unless it passes an earlier result's session_id (and the workspace that session started \
    in). fork: true with a session_id branches it: the new run starts from that session's \
    context under a session_id of its own, and the session itself stays as it was.\n\
    - effort: the reasoning effort (low, medium, high, max), as the CLI spells it. A CLI that \
    cannot fork or has no effort refuses the argument, saying why.\n\
    - Calls are independent and may run at the same time. One still running after \
    handoff_after_secs (45 unless the server sets otherwise) answers with a job_id while the run \
    goes on: collect it with job_wait. For parallel work, start calls with background: true and \
    collect them with one job_wait. Cancelling a call stops the agent and every process it \
    started, until it has been handed off; after that, job_cancel does.\n\
    - isolation: worktree runs the agent in a git worktree of its own (branch \
    cli-agent-mcp/<job id>), started from the workspace as it is, uncommitted and untracked work \
    included (base: head starts from the last commit), so parallel jobs and your own edits never \
    collide; review with job_diff, then job_apply or job_discard. job_revert undoes a run that \
    worked in the workspace.\n\
    - check: a shell command run in the job's tree after the agent (tests, lint); its exit code \
    and output come back as `check`, so you compare facts, not the agent's claims.\n\
    - output_schema: the final answer must be JSON conforming to it, returned parsed as \
    `output`; save_to: a workspace file the whole answer is appended to (a long answer comes \
    back as head and tail; job_result pages the rest).";

/// The instructions for the catalogue as it is now.
pub fn instructions(catalogue: &Catalogue) -> String {
    let missing = catalogue.missing();
    if missing.is_empty() {
        return HOW_CALLS_WORK.to_owned();
    }
    let install: Vec<_> = missing
        .iter()
        .map(|agent| {
            let cli = agent.cli();
            format!(
                "{} (`npm install -g {}@{}`, or set {} to its binary)",
                agent.name(),
                cli.npm_package(),
                cli.verified_version(),
                agent.env_var("BIN")
            )
        })
        .collect();
    format!(
        "{HOW_CALLS_WORK}\n\nNot installed here, so no tool yet: {}. The server looks for them \
         every {} s and offers each once it is installed (notifications/tools/list_changed).",
        install.join("; "),
        LOOK_EVERY.as_secs()
    )
}
