//! A call past the server's bounds, in the person's words: the question they are asked, what
//! their job records once they allowed it, and what it asks on the dashboard when nobody could
//! be asked through the client.

use cli_agent_engine::{Agent, PersonAnswer, PersonQuestion, QuestionAbout, RunRequest};

use super::NoLeave;
use crate::jobs::AskFirst;
use crate::mcp::policy::Refusal;

/// The most characters of the prompt's first line the question quotes.
const PROMPT_SHOWN: usize = 200;

/// What a call the person allowed went past, for its job's record; `None` within the bounds.
pub fn allowed_past(bounds: &[Refusal]) -> Option<String> {
    let words: Vec<_> = bounds.iter().map(Refusal::for_the_person).collect();
    (!words.is_empty()).then(|| words.join("; "))
}

/// The transcript's record that the person let a call past `bounds` through `client`, for its
/// job (asked before the job existed).
pub fn allowed_past_question(bounds: &[Refusal], client: String) -> Option<PersonQuestion> {
    Some(PersonQuestion {
        about: QuestionAbout::ServerBounds {
            bounds: allowed_past(bounds)?,
        },
        answer: PersonAnswer::Allowed,
        answered_by: Some(client),
        why: None,
    })
}

/// What `agent`'s job of `run`, past `bounds`, asks the person on the dashboard before it starts,
/// since `no_leave` came of asking through the client; `None` within the bounds.
pub fn ask_first(
    agent: Agent,
    run: &RunRequest,
    bounds: &[Refusal],
    no_leave: &NoLeave,
) -> Option<AskFirst> {
    let refusal = bounds.first()?.to_string();
    let past = allowed_past(bounds)?;
    let question = format!(
        "{} call past the server's bounds: {past}\n{}\n(Not asked through the client: \
         {no_leave}.)",
        agent,
        question(agent, run, bounds)
    );
    Some(AskFirst {
        question,
        bounds: past,
        refusal,
    })
}

/// The question: who asks what, past which bounds.
pub fn question(agent: Agent, run: &RunRequest, bounds: &[Refusal]) -> String {
    let first_line: String = run
        .prompt
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or_default()
        .chars()
        .take(PROMPT_SHOWN)
        .collect();
    let mut text =
        format!("An MCP call asks the {agent} agent for more than this server allows:\n");
    for bound in bounds {
        text.push_str(&format!("- {}\n", bound.for_the_person()));
    }
    text.push_str(&format!(
        "Workspace: {}\nPermission: {}\nPrompt: {first_line}\n\nAllow this one call?",
        run.workspace.display(),
        run.permission
    ));
    text
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use cli_agent_engine::{Permission, clis};

    use super::*;

    #[test]
    fn the_question_names_agent_bounds_workspace_level_and_the_prompts_first_line() {
        let mut run = RunRequest::new(
            "\nfix the build\nthen more",
            PathBuf::from("/srv/elsewhere"),
        );
        run.permission = Permission::Unlimited;
        let bounds = [Refusal::AboveCeiling {
            asked: Permission::Unlimited,
            ceiling: Permission::WorkspaceWrite,
        }];
        let text = question(clis::CODEX, &run, &bounds);
        for expected in [
            "codex",
            "permission unlimited, above your ceiling workspace-write",
            "Workspace: /srv/elsewhere",
            "Permission: unlimited",
            "Prompt: fix the build\n",
        ] {
            assert!(text.contains(expected), "{expected:?} in {text}");
        }
        assert!(!text.contains("then more"), "{text}");
    }
}
