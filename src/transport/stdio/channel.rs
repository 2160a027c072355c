//! The MCP channel over stdio, built to survive whatever a client writes.
//!
//! A task reads stdin line by line with a size limit ([`MAX_MESSAGE_BYTES`]): a longer line
//! is skipped without being held in memory, and answered. Each line is classified
//! ([`inbound`](super::inbound)); mistakes are answered by the task itself, messages go to the
//! session through a channel, so the session's receive is cancel-safe however rmcp polls it.
//! Every outgoing message is written whole under one lock, so answers never interleave. A
//! request that reuses the id of one in flight is refused ([`InFlight`]).
//!
//! rmcp ends the session when anything but a request comes before `initialize` (a stray
//! `notifications/cancelled`, a response): [`serve`] logs it and serves the same channel
//! again, so the next `initialize` is read as if the stray message had not come.

use std::collections::HashSet;
use std::io;
use std::sync::{Arc, PoisonError};

use cli_agent_engine::process::LineReader;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, RequestId, ServerJsonRpcMessage};
use rmcp::service::{RunningService, ServerInitializeError, ServiceExt};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServerHandler};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use super::inbound::{Inbound, MAX_MESSAGE_BYTES, classify};

/// Messages read ahead of the session; beyond that, stdin waits.
const READ_AHEAD: usize = 16;

type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// Both directions of the MCP channel; a clone is the same channel.
#[derive(Clone)]
pub struct Channel {
    incoming: Arc<Mutex<mpsc::Receiver<ClientJsonRpcMessage>>>,
    output: Output,
    in_flight: InFlight,
}

impl Channel {
    /// Start reading `input`; answers and messages go to `output`.
    pub fn new(
        input: impl AsyncRead + Send + Unpin + 'static,
        output: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Self {
        let (messages, incoming) = mpsc::channel(READ_AHEAD);
        let output = Output(Arc::new(Mutex::new(Some(Box::new(output)))));
        let in_flight = InFlight::default();
        let reader = Reader {
            messages,
            output: output.clone(),
            in_flight: in_flight.clone(),
        };
        tokio::spawn(reader.read(input));
        Self {
            incoming: Arc::new(Mutex::new(incoming)),
            output,
            in_flight,
        }
    }
}

/// Serve `handler` on `channel` until the session starts, skipping what rmcp refuses before
/// `initialize`.
pub async fn serve<H: ServerHandler>(
    handler: Arc<H>,
    channel: Channel,
    session: CancellationToken,
) -> Result<RunningService<RoleServer, Arc<H>>, ServerInitializeError> {
    loop {
        match handler
            .clone()
            .serve_with_ct(channel.clone(), session.clone())
            .await
        {
            Err(ServerInitializeError::ExpectedInitializeRequest(message)) => {
                tracing::warn!(?message, "ignored a message that came before `initialize`");
            }
            started => return started,
        }
    }
}

impl Transport<RoleServer> for Channel {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = io::Result<()>> + Send + 'static {
        let answered = match &item {
            ServerJsonRpcMessage::Response(response) => Some(&response.id),
            ServerJsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        if let Some(id) = answered {
            self.in_flight.release(id);
        }
        let output = self.output.clone();
        async move { output.write(&item).await }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.incoming.lock().await.recv().await
    }

    async fn close(&mut self) -> io::Result<()> {
        self.output.0.lock().await.take();
        Ok(())
    }
}

/// The channel's output: one message per line, each written whole.
#[derive(Clone)]
struct Output(Arc<Mutex<Option<Writer>>>);

impl Output {
    async fn write(&self, message: &ServerJsonRpcMessage) -> io::Result<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        let mut writer = self.0.lock().await;
        let writer = writer.as_mut().ok_or_else(|| {
            io::Error::new(io::ErrorKind::NotConnected, "the MCP channel is closed")
        })?;
        writer.write_all(&line).await?;
        writer.flush().await
    }
}

/// The ids of the requests not yet answered. rmcp keys a call by its id: a second request under
/// the id of one in flight takes over its cancellation, so the first one's answer cancels the
/// second, which is then never answered. A reused id is refused instead. A cancelled request
/// keeps its id: its handler still ends with an answer that rmcp matches by id and drops, so a
/// new request under that id would be cancelled by it (and MCP forbids reusing an id anyway).
#[derive(Clone, Default)]
struct InFlight(Arc<std::sync::Mutex<HashSet<RequestId>>>);

impl InFlight {
    /// Whether `id` was free; it is taken now.
    fn claim(&self, id: &RequestId) -> bool {
        self.ids().insert(id.clone())
    }

    fn release(&self, id: &RequestId) {
        self.ids().remove(id);
    }

    fn ids(&self) -> std::sync::MutexGuard<'_, HashSet<RequestId>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The reading side: messages to the session, answers to mistakes on the output.
struct Reader {
    messages: mpsc::Sender<ClientJsonRpcMessage>,
    output: Output,
    in_flight: InFlight,
}

impl Reader {
    /// Read `input` to its end or until the session is gone.
    async fn read(self, input: impl AsyncRead + Unpin) {
        let mut lines = LineReader::new(input, MAX_MESSAGE_BYTES);
        loop {
            while let Some(line) = lines.next_line() {
                if !self.take(classify(line)).await {
                    return;
                }
            }
            if lines.is_done() {
                return;
            }
            if let Err(error) = lines.fill().await {
                tracing::warn!(%error, "reading the MCP channel failed");
                return;
            }
        }
    }

    /// Act on one line; false once the session is gone.
    async fn take(&self, inbound: Inbound) -> bool {
        match inbound {
            Inbound::Message(message) => return self.forward(*message).await,
            Inbound::Refused(answer) => self.refuse(&answer).await,
            Inbound::Ignored(why) => tracing::warn!(%why, "ignored a malformed message"),
            Inbound::Blank => {}
        }
        true
    }

    /// Pass `message` to the session, unless it reuses the id of a request not yet answered;
    /// false once the session is gone.
    async fn forward(&self, message: ClientJsonRpcMessage) -> bool {
        if let ClientJsonRpcMessage::Request(request) = &message
            && !self.in_flight.claim(&request.id)
        {
            let reason = format!(
                "request id {} is taken by an earlier request that is still running or was \
                 cancelled: give each request an id of its own",
                request.id
            );
            let answer = ErrorData::invalid_request(reason, None);
            let id = Some(request.id.clone());
            self.refuse(&ServerJsonRpcMessage::error(answer, id)).await;
            return true;
        }
        self.messages.send(message).await.is_ok()
    }

    async fn refuse(&self, answer: &ServerJsonRpcMessage) {
        // The error only: an echoed id may be megabytes long.
        if let ServerJsonRpcMessage::Error(refusal) = answer {
            let error = &refusal.error;
            tracing::warn!(code = error.code.0, message = %error.message, "refused a malformed message");
        }
        if let Err(error) = self.output.write(answer).await {
            tracing::debug!(%error, "could not answer a malformed message");
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;

    #[tokio::test]
    async fn a_line_over_the_limit_is_answered_and_the_next_message_arrives() {
        let (mut client_in, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, client_out) = tokio::io::duplex(64 * 1024);
        let mut channel = Channel::new(server_in, server_out);
        let writer = tokio::spawn(async move {
            let chunk = vec![b'x'; 1024 * 1024];
            for _ in 0..(MAX_MESSAGE_BYTES / chunk.len() + 2) {
                client_in.write_all(&chunk).await.expect("write");
            }
            client_in
                .write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n")
                .await
                .expect("write");
            client_in
        });
        let mut answers = BufReader::new(client_out).lines();
        let answer = answers.next_line().await.expect("read").expect("an answer");
        let answer: Value = serde_json::from_str(&answer).expect("json");
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
        let message = channel.receive().await.expect("the next message");
        assert!(
            matches!(message, ClientJsonRpcMessage::Request(_)),
            "{message:?}"
        );
        drop(writer.await.expect("writer"));
        assert!(
            channel.receive().await.is_none(),
            "the end of input ends the session"
        );
    }

    #[tokio::test]
    async fn an_id_in_flight_is_refused_free_again_once_answered_and_kept_when_cancelled() {
        let (mut client_in, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, client_out) = tokio::io::duplex(64 * 1024);
        let mut channel = Channel::new(server_in, server_out);
        let mut answers = BufReader::new(client_out).lines();
        let ping = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n";
        let cancel = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":7}}\n";

        client_in.write_all(ping).await.expect("write");
        assert!(matches!(
            channel.receive().await,
            Some(ClientJsonRpcMessage::Request(_))
        ));
        client_in.write_all(ping).await.expect("write");
        let answer = answers.next_line().await.expect("read").expect("a refusal");
        let answer: Value = serde_json::from_str(&answer).expect("json");
        assert_eq!(
            (&answer["id"], &answer["error"]["code"]),
            (&Value::from(7), &Value::from(-32600))
        );

        let pong = ServerJsonRpcMessage::response(
            rmcp::model::ServerResult::empty(()),
            RequestId::Number(7),
        );
        channel.send(pong).await.expect("send");
        answers
            .next_line()
            .await
            .expect("read")
            .expect("the answer");
        client_in.write_all(ping).await.expect("write");
        assert!(
            matches!(
                channel.receive().await,
                Some(ClientJsonRpcMessage::Request(_))
            ),
            "free once answered"
        );

        client_in.write_all(cancel).await.expect("write");
        assert!(matches!(
            channel.receive().await,
            Some(ClientJsonRpcMessage::Notification(_))
        ));
        client_in.write_all(ping).await.expect("write");
        let answer = answers.next_line().await.expect("read").expect("a refusal");
        assert!(answer.contains("-32600"), "kept once cancelled: {answer}");
    }
}
