//! An agent tool's call, from its arguments to its answer: past the server's bounds only with
//! the person's leave, then a job ([`Launcher`]) the call waits on until it ends, hands off, or
//! has a question for the person that must go out with the call's own answer.
//!
//! Until it answers, the call owns its run: rmcp never aborts a handler, but on
//! `notifications/cancelled` it fires `ctx.ct` and drops the response, so the call stops the
//! job itself and waits for its teardown. A client on 2026-07-28 takes no request from the
//! server: a question (about the bounds, or a delegate's mid-run) is the call's answer, an
//! `InputRequiredResult`, and the client's retry, with the person's answer and the sealed
//! state, goes on where the call left off ([`Pending`]).

use std::sync::Arc;
use std::time::Duration;

use cli_agent_engine::Agent;
use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CreateTaskResult, ElicitRequest,
    InputRequest, InputRequests, InputRequiredResult, InputResponses,
};
use rmcp::service::RequestContext;

use super::ask::{self, BeyondBounds, Binding, Client, NoLeave};
use super::handler::AgentServer;
use super::launch::Leave;
use super::pending::Pending;
use super::result::{self, JobReport};
use super::tasks;
use super::tools::{self, CallRequest};
use crate::jobs::store::{JobId, Origin};
use crate::jobs::{AskFirst, Job, JobsError, StopReason};

/// The key of a question about the server's bounds among a result's input requests.
const BOUNDS_KEY: &str = "server_bounds";

/// How a call's wait on its job ended.
enum Waited {
    Ended,
    HandedOff,
    Asking(InputRequests),
}

impl AgentServer {
    /// `agent`'s tool called: a fresh call, or the retry of one that asked the person.
    pub(super) async fn call_agent(
        &self,
        agent: Agent,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let binding = Binding::of(&request.name, request.arguments.as_ref());
        if let Some(state) = &request.request_state {
            let pending = self.opened(&binding, state)?;
            let responses = request.input_responses.unwrap_or_default();
            return self.resume(pending, &responses, binding, context).await;
        }
        let read = match self.beyond_bounds {
            BeyondBounds::Ask { .. } => tools::call_request_to_ask,
            BeyondBounds::Refuse => tools::call_request,
        };
        match read(agent, request.arguments, &self.policy) {
            Ok(call) => Ok(self.past_bounds(call, binding, context).await),
            Err(error) => Ok(error.to_result().into()),
        }
    }

    /// What the state of a retry stands for; a state this server did not give for this very
    /// call, or gave out already, is an invalid request and runs nothing.
    pub(super) fn opened(&self, binding: &Binding, state: &str) -> Result<Pending, ErrorData> {
        self.states.open(binding, state).map_err(refused_state)
    }

    /// A fresh call: within the bounds it runs; past them only with the person's leave.
    async fn past_bounds(
        &self,
        call: CallRequest,
        binding: Binding,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        if call.beyond_bounds.is_empty() {
            return self.run(call, Leave::Within, binding, context).await;
        }
        let BeyondBounds::Ask { timeout } = self.beyond_bounds else {
            return self
                .settle_bounds(call, Err(NoLeave::NeverAsked), binding, context)
                .await;
        };
        let session = match Client::of(&context, &self.board) {
            Ok(Client::Session(peer)) => peer,
            Ok(requests) => return self.ask_bounds(call, requests, &binding),
            Err(no_leave) => {
                return self
                    .settle_bounds(call, Err(no_leave), binding, context)
                    .await;
            }
        };
        let question = ask::question(call.agent, &call.run, &call.beyond_bounds);
        let answer = tokio::select! {
            answer = ask::elicit(&session, question, timeout) => {
                answer.map(|()| ask::session_name(&session))
            }
            () = context.ct.cancelled() => Err(NoLeave::Cancelled),
        };
        self.settle_bounds(call, answer, binding, context).await
    }

    /// Run a call past its bounds as `answer` says: with the person's leave (given through
    /// the named client), parked for the dashboard, or refused.
    async fn settle_bounds(
        &self,
        call: CallRequest,
        answer: Result<String, NoLeave>,
        binding: Binding,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let agent = call.agent;
        let leave = match answer {
            Ok(client) => {
                tracing::info!(%agent, "the person allowed a call past the server's bounds");
                Leave::Allowed(client)
            }
            Err(no_leave) => {
                tracing::info!(%agent, "no leave to go past the server's bounds: {no_leave}");
                match parked(self.park_questions, &call, &no_leave) {
                    Some(ask_first) => Leave::AskFirst(ask_first),
                    None => return result::error_result(refusal(&call)).into(),
                }
            }
        };
        self.run(call, leave, binding, context).await
    }

    /// Ask a 2026-07-28 client about a call past the bounds: the call answers with the
    /// question; its retry brings the person's answer. Unanswered within the ask timeout, the
    /// call is refused, or parked for the dashboard.
    fn ask_bounds(&self, call: CallRequest, client: Client, binding: &Binding) -> CallToolResponse {
        let question = ask::question(call.agent, &call.run, &call.beyond_bounds);
        let form = match ask::form(question) {
            Ok(form) => form,
            Err(no_leave) => {
                return result::error_result(format!("{} ({no_leave})", refusal(&call))).into();
            }
        };
        tracing::info!(agent = %call.agent, "the call answers with the person's question about the bounds");
        let call = Box::new(call);
        let (state, id) = self.states.seal(binding, Pending::Bounds { call, client });
        self.lapse_later(id);
        let request = InputRequest::Elicitation(ElicitRequest::new(form));
        let requests = InputRequests::from([(BOUNDS_KEY.to_owned(), request)]);
        InputRequiredResult::new(Some(requests), Some(state)).into()
    }

    /// Once the person had their time to answer the bounds question `id` and no retry came:
    /// refuse the call, or park it for the dashboard; a late retry is told which.
    fn lapse_later(&self, id: u64) {
        let (states, launcher) = (self.states.clone(), self.launcher());
        tokio::spawn(async move {
            tokio::time::sleep(states.lapse()).await;
            let Some(Pending::Bounds { call, client }) = states.take(id) else {
                return;
            };
            let no_leave = NoLeave::NoAnswer(states.lapse());
            let (agent, refusal) = (call.agent, refusal(&call));
            let parked = match parked(launcher.park_questions, &call, &no_leave) {
                Some(ask_first) => launcher
                    .start_job(*call, Leave::AskFirst(ask_first), Origin::Call, Ok(client))
                    .await
                    .ok()
                    .map(|job| job.id.clone()),
                None => None,
            };
            states.keep(id, Pending::Lapsed { refusal, parked });
            // Said once a late retry can be told the outcome, not before.
            tracing::info!(%agent, "no leave to go past the server's bounds: {no_leave}");
        });
    }

    /// The retry of a call that asked the person, going on where it left off.
    async fn resume(
        &self,
        pending: Pending,
        responses: &InputResponses,
        binding: Binding,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(match pending {
            Pending::Bounds { call, client } => match responses.get(BOUNDS_KEY) {
                // No answer to the question: it is asked again.
                None => self.ask_bounds(*call, client, &binding),
                Some(answer) => {
                    let answer = ask::read_response(answer.clone()).map(|()| client.name());
                    self.settle_bounds(*call, answer, binding, context).await
                }
            },
            Pending::Lapsed {
                refusal,
                parked: None,
            } => result::error_result(refusal).into(),
            Pending::Lapsed {
                parked: Some(job), ..
            } => {
                self.follow_again(&job, self.handoff_after, binding, context)
                    .await
            }
            Pending::Follow { job, handoff } => {
                self.board.answer(std::slice::from_ref(&job), responses);
                self.follow_again(&job, handoff, binding, context).await
            }
            // Sealed for a job_wait: no agent tool's call can bring it back.
            Pending::Wait(_) => return Err(refused_state(ask::StateRefused)),
        })
    }

    /// Wait on job `id` again, or report it if it has ended and left this server's memory.
    async fn follow_again(
        &self,
        id: &JobId,
        handoff: Duration,
        binding: Binding,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        match self.jobs.live(id) {
            Some(job) => self.follow(job, handoff, binding, context).await,
            None => self.stored_report(id).await.into(),
        }
    }

    /// Job `id`'s report from the store: it ended and left this server's memory.
    async fn stored_report(&self, id: &JobId) -> CallToolResult {
        let found = async {
            let record = self.jobs.record_of(id).await?;
            let finished = self.jobs.stored_finished(&record).await?;
            let budget = self.result_budget;
            Ok::<_, JobsError>(JobReport::of_record(&record, finished.as_deref(), budget))
        };
        match found.await {
            Ok(report) => report.into_result(),
            Err(error) => result::error_result(error.to_string()),
        }
    }

    /// Start the call's job and wait on it, or answer at once with it as a task or as a
    /// background job.
    async fn run(
        &self,
        call: CallRequest,
        leave: Leave,
        binding: Binding,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let client = match self.beyond_bounds {
            BeyondBounds::Refuse => Err(NoLeave::NeverAsked),
            BeyondBounds::Ask { .. } => Client::of(&context, &self.board),
        };
        let wants_task = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks());
        let origin = match call.background || wants_task {
            true => Origin::Background,
            false => Origin::Call,
        };
        let handoff = call
            .handoff_after_secs
            .map_or(self.handoff_after, Duration::from_secs);
        let background = call.background;
        let job = match self.launcher().start_job(call, leave, origin, client).await {
            Ok(job) => job,
            Err(refused) => return refused.into(),
        };
        if wants_task {
            return CallToolResponse::Task(CreateTaskResult::new(tasks::created(&job)));
        }
        if background {
            return JobReport::of_job(&job, self.result_budget)
                .into_result()
                .into();
        }
        self.follow(job, handoff, binding, context).await
    }

    /// Wait on `job` for the call: until it ends, hands off, or has a question for a
    /// 2026-07-28 client, which the call then answers with.
    async fn follow(
        &self,
        job: Arc<Job>,
        handoff: Duration,
        binding: Binding,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let agent = job.agent;
        // Until the call answers, it owns the run: if this handler is dropped, it stops.
        let owned = job.cancel_token().clone().drop_guard();
        let reporter = self.progress(&context, agent.name(), &job.progress, job.cancel_token());
        let ids = [job.id.clone()];
        let waited = tokio::select! {
            _ = job.finished() => Waited::Ended,
            () = sleep_or_never(handoff) => Waited::HandedOff,
            // Only the person answers on the dashboard: no use holding the call meanwhile.
            () = self.jobs.until_waiting(&job) => Waited::HandedOff,
            questions = self.questions_for(&context, &ids) => Waited::Asking(questions),
            () = context.ct.cancelled() => {
                tracing::info!(%agent, id = %context.id, "the client cancelled the call");
                job.stop(StopReason::CallCancelled);
                job.finished().await;
                Waited::Ended
            }
        };
        if !matches!(waited, Waited::Ended) {
            owned.disarm();
        }
        if let Some(reporter) = reporter {
            reporter.finish().await;
        }
        self.answer_after(waited, &job, handoff, &binding)
    }

    /// The call's answer once its wait on `job` ended as `waited`.
    fn answer_after(
        &self,
        waited: Waited,
        job: &Job,
        handoff: Duration,
        binding: &Binding,
    ) -> CallToolResponse {
        let agent = job.agent;
        match waited {
            Waited::Asking(questions) => {
                tracing::info!(%agent, job = %job.id, "the call answers with the person's questions");
                let pending = Pending::Follow {
                    job: job.id.clone(),
                    handoff,
                };
                let (state, _) = self.states.seal(binding, pending);
                InputRequiredResult::new(Some(questions), Some(state)).into()
            }
            Waited::HandedOff => {
                tracing::info!(%agent, job = %job.id, "handed off: the run carries on as a job");
                JobReport::of_job(job, self.result_budget)
                    .into_result()
                    .into()
            }
            Waited::Ended => JobReport::of_job(job, self.result_budget)
                .into_result()
                .into(),
        }
    }

    /// Resolves with the questions about `jobs` once there are any, for a request whose
    /// client takes them as input requests; never for any other.
    pub(super) async fn questions_for(
        &self,
        context: &RequestContext<RoleServer>,
        jobs: &[JobId],
    ) -> InputRequests {
        match Client::of(context, &self.board) {
            Ok(Client::Requests { .. }) if !jobs.is_empty() => self.board.until_asking(jobs).await,
            _ => std::future::pending().await,
        }
    }
}

/// A state refused, as the retry's answer: an invalid request, nothing run.
fn refused_state(refused: ask::StateRefused) -> ErrorData {
    ErrorData::invalid_params(refused.to_string(), None)
}

/// What `call`, past the bounds, asks on the dashboard when `no_leave` came of asking through
/// the client and questions are parked (`park`: `--park-questions`).
fn parked(park: bool, call: &CallRequest, no_leave: &NoLeave) -> Option<AskFirst> {
    if !(park && no_leave.may_park()) {
        return None;
    }
    ask::ask_first(call.agent, &call.run, &call.beyond_bounds, no_leave)
}

/// The refusal a call past the bounds gets, as if nobody had been asked.
fn refusal(call: &CallRequest) -> String {
    call.beyond_bounds
        .first()
        .map(ToString::to_string)
        .unwrap_or_default()
}

async fn sleep_or_never(after: Duration) {
    if after.is_zero() {
        std::future::pending::<()>().await;
    }
    tokio::time::sleep(after).await;
}
