//! Which agents the catalogue offers as tools: every custom agent of the config file and every
//! built-in CLI given a path (`--<cli>-bin`, `CAM_<CLI>_BIN`, the file's `bin`), and any other
//! built-in CLI once its binary is found where `doctor` finds it (PATH, then where installers
//! put it). The server looks again every [`LOOK_EVERY`], so a CLI installed while it runs is
//! offered within seconds (and one removed goes); each change is a new value of the
//! catalogue's watch, which every session hears as `notifications/tools/list_changed`.

use std::sync::Arc;
use std::time::Duration;

use cli_agent_engine::{Agent, EngineConfig, find_cli};
use rmcp::{Peer, RoleServer};
use tokio::sync::watch;

use crate::offer::Offer;

/// How often the server looks for CLIs: a look is a few stat calls for each CLI not given a
/// path (about 25 places each), so a CLI installed while the server runs is offered soon at no
/// cost worth counting.
pub const LOOK_EVERY: Duration = Duration::from_secs(2);

/// How often a session's announcer checks that its session is still there, when no change
/// came to wake it.
const SESSION_CHECK: Duration = Duration::from_secs(30);

/// Which of the offers are offered, in their order.
pub type Offered = Arc<[bool]>;

/// Whether each offer's agent is offered now. `login_shell` off keeps a server's start fast:
/// the login shell's PATH (asked once, up to 2 s) is looked at by the first look after it.
pub(super) fn look(offers: &[Offer], config: &EngineConfig) -> Offered {
    offers
        .iter()
        .map(|offer| is_offered(offer.agent, config))
        .collect()
}

fn is_offered(agent: Agent, config: &EngineConfig) -> bool {
    !agent.is_builtin() || has_configured_path(agent, config) || find_cli(agent, config).is_ok()
}

/// A path (not a bare name, which is searched for) given for the agent: offered as it is, so
/// a wrong one fails the call with the setting to fix rather than hiding the tool.
fn has_configured_path(agent: Agent, config: &EngineConfig) -> bool {
    config
        .binaries
        .get(agent.name())
        .is_some_and(|bin| bin.components().count() > 1)
}

/// Look again every [`LOOK_EVERY`] (the first time at once, with the login shell when the
/// config allows it), on the blocking pool, and publish each change. Ends with the runtime.
pub(super) fn keep_looking(
    offers: Arc<[Offer]>,
    config: EngineConfig,
    offered: watch::Sender<Offered>,
) {
    tokio::spawn(async move {
        loop {
            let (offers_now, config_now) = (offers.clone(), config.clone());
            let Ok(now) = tokio::task::spawn_blocking(move || look(&offers_now, &config_now)).await
            else {
                return;
            };
            offered.send_if_modified(|current| {
                let changed = *current != now;
                if changed {
                    log_change(&offers, current, &now);
                    *current = now;
                }
                changed
            });
            tokio::time::sleep(LOOK_EVERY).await;
        }
    });
}

fn log_change(offers: &[Offer], before: &[bool], now: &[bool]) {
    for ((offer, was), is) in offers.iter().zip(before).zip(now) {
        if was != is {
            let name = offer.agent.name();
            match is {
                true => tracing::info!(agent = name, "found its CLI: offering its tool"),
                false => {
                    tracing::info!(agent = name, "its CLI is gone: no longer offering its tool")
                }
            }
        }
    }
}

/// Tell one session's client of every change of the tools on offer, until it goes.
pub fn announce_changes(peer: Peer<RoleServer>, mut changes: watch::Receiver<Offered>) {
    tokio::spawn(async move {
        loop {
            let changed = tokio::select! {
                changed = changes.changed() => changed.is_ok(),
                () = tokio::time::sleep(SESSION_CHECK) => false,
            };
            if peer.is_transport_closed() {
                return;
            }
            if changed && peer.notify_tool_list_changed().await.is_err() {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use cli_agent_engine::agent::Profile;
    use cli_agent_engine::clis;

    use super::*;

    #[test]
    fn a_custom_agent_and_a_configured_path_are_offered_and_a_name_found_nowhere_is_not() {
        let reviewer = Agent::new("reviewer", clis::CLAUDE.cli(), Profile::default());
        let offers: Vec<Offer> = [reviewer, clis::CODEX, clis::GEMINI]
            .into_iter()
            .map(Offer::from)
            .collect();
        let mut config = EngineConfig {
            login_shell: false,
            ..EngineConfig::default()
        };
        let nowhere = "cam-found-nowhere-7f3a";
        for (agent, bin) in [
            ("reviewer", nowhere),
            ("codex", "/no/such/dir/codex"),
            ("gemini", nowhere),
        ] {
            config.binaries.insert(agent.to_owned(), PathBuf::from(bin));
        }
        assert_eq!(*look(&offers, &config), [true, true, false]);
    }
}
