//! What a `requestState` this server gave out stands for, from the call that asked the
//! person until the client's retry brings their answer (see `agent_call`).

use std::time::Duration;

use super::ask::Client;
use super::tools::CallRequest;
use crate::jobs::store::JobId;

/// What a `requestState` this server gave out stands for, until the client's retry.
pub enum Pending {
    /// A call past the bounds, asked about through `client`: it runs if the person allows it.
    Bounds {
        call: Box<CallRequest>,
        client: Client,
    },
    /// A call past the bounds that nobody answered about in time: refused with `refusal`, or
    /// parked as job `parked` to ask on the dashboard.
    Lapsed {
        refusal: String,
        parked: Option<JobId>,
    },
    /// A call waiting on `job`, whose questions went out: it waits on, handing off after
    /// `handoff`.
    Follow { job: JobId, handoff: Duration },
    /// A `job_wait` on `jobs`, whose questions went out: it waits on.
    Wait(Vec<JobId>),
}
