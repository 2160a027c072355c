//! The MCP channel over stdio, built to survive whatever a client writes.
//!
//! A task reads stdin line by line with a size limit ([`MAX_MESSAGE_BYTES`]): a longer line
//! is skipped without being held in memory, and answered. Each line is classified
//! ([`inbound`](super::inbound)); mistakes are answered by the task itself, messages go to the
//! session through a channel, so the session's receive is cancel-safe however rmcp polls it.
//! Every outgoing message is written whole under one lock, so answers never interleave.
//!
//! rmcp ends the session when anything but a request comes before `initialize` (a stray
//! `notifications/cancelled`, a response): [`serve`] logs it and serves the same channel
//! again, so the next `initialize` is read as if the stray message had not come.

use std::io;
use std::sync::Arc;

use cli_agent_engine::process::LineReader;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
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
}

impl Channel {
    /// Start reading `input`; answers and messages go to `output`.
    pub fn new(
        input: impl AsyncRead + Send + Unpin + 'static,
        output: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Self {
        let (messages, incoming) = mpsc::channel(READ_AHEAD);
        let output = Output(Arc::new(Mutex::new(Some(Box::new(output)))));
        tokio::spawn(read_lines(input, messages, output.clone()));
        Self {
            incoming: Arc::new(Mutex::new(incoming)),
            output,
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

/// Read `input` to its end: messages to the session, answers to mistakes on `output`.
async fn read_lines(
    input: impl AsyncRead + Unpin,
    messages: mpsc::Sender<ClientJsonRpcMessage>,
    output: Output,
) {
    let mut lines = LineReader::new(input, MAX_MESSAGE_BYTES);
    loop {
        let line = match lines.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(error) => {
                tracing::warn!(%error, "reading the MCP channel failed");
                break;
            }
        };
        match classify(line) {
            Inbound::Message(message) => {
                if messages.send(*message).await.is_err() {
                    break;
                }
            }
            Inbound::Refused(answer) => {
                // The error only: an echoed id may be megabytes long.
                if let ServerJsonRpcMessage::Error(refusal) = answer.as_ref() {
                    let error = &refusal.error;
                    tracing::warn!(code = error.code.0, message = %error.message, "refused a malformed message");
                }
                if let Err(error) = output.write(&answer).await {
                    tracing::debug!(%error, "could not answer a malformed message");
                }
            }
            Inbound::Ignored(why) => tracing::warn!(%why, "ignored a malformed message"),
            Inbound::Blank => {}
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
}
