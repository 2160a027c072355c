//! Resource subscriptions, per session: each session hears `notifications/resources/list_changed`
//! when a job is added, and `notifications/resources/updated` for each job URI it subscribed
//! to when that job starts or ends. One HTTP server carries many sessions (told apart by their
//! `Mcp-Session-Id`); stdio carries one.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::SubscriptionContext;
use rmcp::{Peer, RoleServer};
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;

use super::resources::JobUri;
use super::tools::Offered;
use crate::jobs::JobChange;

#[derive(Default)]
pub struct Subscriptions {
    /// Each session's subscribed URIs.
    sessions: Mutex<HashMap<String, HashSet<String>>>,
}

impl Subscriptions {
    /// Tell the session `key` of job changes until it goes.
    pub fn open(
        self: &Arc<Self>,
        key: String,
        peer: Peer<RoleServer>,
        changes: Receiver<JobChange>,
    ) {
        self.lock().entry(key.clone()).or_default();
        tokio::spawn(self.clone().forward(key, peer, changes));
    }

    pub fn subscribe(&self, key: &str, uri: &str) {
        self.lock()
            .entry(key.to_owned())
            .or_default()
            .insert(uri.to_owned());
    }

    pub fn unsubscribe(&self, key: &str, uri: &str) {
        if let Some(uris) = self.lock().get_mut(key) {
            uris.remove(uri);
        }
    }

    async fn forward(
        self: Arc<Self>,
        key: String,
        peer: Peer<RoleServer>,
        mut changes: Receiver<JobChange>,
    ) {
        loop {
            let sent = match changes.recv().await {
                Ok(JobChange::Added(_)) => peer.notify_resource_list_changed().await.is_ok(),
                Ok(JobChange::Updated(id)) => {
                    let uris = self.subscribed(&key, |uri| uri.id == id);
                    notify_updated(&peer, uris).await
                }
                // Fell behind: anything may have changed.
                Err(RecvError::Lagged(_)) => {
                    let uris = self.subscribed(&key, |_| true);
                    peer.notify_resource_list_changed().await.is_ok()
                        && notify_updated(&peer, uris).await
                }
                Err(RecvError::Closed) => false,
            };
            if !sent || peer.is_transport_closed() {
                break;
            }
        }
        self.lock().remove(&key);
    }

    /// The session's subscribed job URIs that `wanted` picks.
    fn subscribed(&self, key: &str, wanted: impl Fn(&JobUri) -> bool) -> Vec<String> {
        let sessions = self.lock();
        let Some(uris) = sessions.get(key) else {
            return Vec::new();
        };
        uris.iter()
            .filter(|uri| JobUri::parse(uri).is_ok_and(|job| wanted(&job)))
            .cloned()
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, HashSet<String>>> {
        self.sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Whether the session is still there to tell.
async fn notify_updated(peer: &Peer<RoleServer>, uris: Vec<String>) -> bool {
    for uri in uris {
        if let Err(error) = peer
            .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
            .await
        {
            tracing::debug!(%error, "a session went before hearing of a job's change");
            return false;
        }
    }
    true
}

/// What a 2026-07-28 `subscriptions/listen` stream may carry of what it asked for: the tools on
/// offer changing, the list of jobs changing, and updates of job URIs.
pub fn accepted_filter(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let job_uris = requested.resource_subscriptions.as_ref().map(|uris| {
        uris.iter()
            .filter(|uri| JobUri::parse(uri).is_ok())
            .cloned()
            .collect()
    });
    let mut accepted = SubscriptionFilter::new();
    accepted.tools_list_changed = requested.tools_list_changed;
    accepted.resources_list_changed = requested.resources_list_changed;
    accepted.resource_subscriptions = job_uris;
    accepted
}

/// Carry job changes, and changes of the tools on offer, on one `subscriptions/listen` stream
/// until the client ends it.
pub async fn listen(
    context: SubscriptionContext,
    mut changes: Receiver<JobChange>,
    mut tools: watch::Receiver<Offered>,
) {
    let sink = context.sink();
    let accepted = sink.accepted();
    let wants_list = accepted.resources_list_changed == Some(true);
    let mut wants_tools = accepted.tools_list_changed == Some(true);
    let uris = accepted.resource_subscriptions.clone().unwrap_or_default();
    loop {
        let change = tokio::select! {
            () = context.cancelled() => return,
            changed = tools.changed(), if wants_tools => {
                // The catalogue is the server's: it goes only with it.
                wants_tools = changed.is_ok();
                if wants_tools && let Err(error) = sink.notify_tool_list_changed().await {
                    tracing::debug!(%error, "a listen stream went before hearing the tools changed");
                    return;
                }
                continue;
            }
            change = changes.recv() => change,
        };
        let sent = match change {
            Ok(JobChange::Added(_)) if wants_list => sink.notify_resource_list_changed().await,
            Ok(JobChange::Updated(id)) => {
                let mut sent = Ok(());
                for uri in uris
                    .iter()
                    .filter(|uri| JobUri::parse(uri).is_ok_and(|job| job.id == id))
                {
                    sent = sent.and(sink.notify_resource_updated(uri.clone()).await);
                }
                sent
            }
            Ok(JobChange::Added(_)) | Err(RecvError::Lagged(_)) => Ok(()),
            Err(RecvError::Closed) => return,
        };
        if let Err(error) = sent {
            tracing::debug!(%error, "a listen stream went before hearing of a job's change");
            return;
        }
    }
}
