//! The dashboard for tests: `cli-agent-mcp dashboard` on a job store in a temp dir, and a
//! small HTTP/1.0 client over a socket (HTTP/1.0: the body ends where the connection does,
//! no chunks to undo), so a test sets every header itself, Host included. Server-sent events
//! are read as they arrive, each wait with a generous deadline. Also: an MCP server on the
//! same store, and background jobs started through it.
#![allow(dead_code)]

pub mod browser;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

use crate::mcp::{Server, is_error};

/// A server keeping its jobs in `state`, initialized.
pub async fn server_on(state: &Path) -> Server {
    let mut server = Server::builder().env("CAM_STATE_DIR", state).spawn();
    server.initialize().await;
    server
}

/// Starts a background job of `agent`; its id.
pub async fn background(server: &mut Server, agent: &str, prompt: &str) -> String {
    let started = server
        .call(agent, json!({"prompt": prompt, "background": true}))
        .await;
    assert!(!is_error(&started), "{started:#}");
    started["structuredContent"]["job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no job id in {started:#}"))
        .to_owned()
}

/// Starts a codex job in the background that streams an event every 0.1 s for ten minutes,
/// its processes tagged `tag`; returns its id once they run.
pub async fn streaming_job(server: &mut Server, tag: &str) -> String {
    let id = background(server, "codex", &format!("stream=600 tag={tag} children=1")).await;
    crate::common::wait_for_tagged(tag, 1).await;
    id
}

/// Long enough for a loaded 2-core machine.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// A running dashboard.
pub struct Dashboard {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub host: String,
    /// The printed one-time token.
    pub token: String,
}

impl Dashboard {
    /// `cli-agent-mcp dashboard` on the store in `state`; waits for its URL.
    pub async fn start(state: &Path) -> Self {
        let mut child = Command::from(crate::common::cam_command())
            .arg("dashboard")
            .env("CAM_STATE_DIR", state)
            .env_remove("CAM_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start the dashboard");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        tokio::time::timeout(DEADLINE, BufReader::new(stdout).read_line(&mut line))
            .await
            .expect("the dashboard printed no URL in time")
            .expect("read the dashboard's stdout");
        let (host, token) = line
            .trim_end()
            .strip_prefix("http://")
            .and_then(|rest| rest.split_once("/?token="))
            .unwrap_or_else(|| panic!("not a dashboard URL: {line:?}"));
        Self {
            host: host.to_owned(),
            token: token.to_owned(),
            child,
        }
    }

    /// The URL it printed.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.host, self.token)
    }

    pub fn pid(&self) -> i32 {
        self.child.id().map_or(0, |pid| pid as i32)
    }

    /// Logs in with the token: the session cookie (`name=value`).
    pub async fn log_in(&self) -> String {
        let response = self
            .send(&Request::get(&format!("/?token={}", self.token)))
            .await;
        assert_eq!(response.status, 303, "{response:?}");
        assert_eq!(response.header("location"), Some("/"));
        let cookie = response.header("set-cookie").expect("a session cookie");
        cookie.split(';').next().expect("name=value").to_owned()
    }

    /// The CSRF value job `id`'s page carries for its buttons.
    pub async fn csrf_of_page(&self, cookie: &str, id: &str) -> String {
        let page = self
            .send(&Request::get(&format!("/jobs/{id}")).cookie(cookie))
            .await;
        assert_eq!(page.status, 200, "{page:?}");
        let marker = r#"<meta name="csrf" content=""#;
        let start = page.body.find(marker).expect("a csrf meta tag") + marker.len();
        page.body[start..].split('"').next().unwrap().to_owned()
    }

    /// POSTs to `path` as job `id`'s page does (session cookie, CSRF value, Origin).
    pub async fn post_from_page(&self, cookie: &str, id: &str, path: &str) -> Response {
        let csrf = self.csrf_of_page(cookie, id).await;
        let origin = format!("http://{}", self.host);
        let request = Request::post(path)
            .cookie(cookie)
            .header("x-csrf-token", &csrf)
            .header("Origin", &origin);
        self.send(&request).await
    }

    pub async fn send(&self, request: &Request) -> Response {
        let mut stream = self.open(request).await;
        let mut raw = Vec::new();
        tokio::time::timeout(DEADLINE, stream.read_to_end(&mut raw))
            .await
            .expect("the dashboard did not answer in time")
            .expect("read the response");
        Response::parse(&String::from_utf8_lossy(&raw))
    }

    /// Opens an SSE feed; panics unless it answers 200.
    pub async fn feed(&self, request: &Request) -> Feed {
        let mut reader = BufReader::new(self.open(request).await);
        let mut head = String::new();
        loop {
            let mut line = String::new();
            let read = tokio::time::timeout(DEADLINE, reader.read_line(&mut line))
                .await
                .expect("no feed headers in time")
                .expect("read the feed");
            if read == 0 || line == "\r\n" {
                break;
            }
            head.push_str(&line);
        }
        assert!(head.starts_with("HTTP/1.0 200"), "{head}");
        Feed {
            reader,
            messages: Vec::new(),
        }
    }

    async fn open(&self, request: &Request) -> TcpStream {
        let mut stream = TcpStream::connect(&self.host)
            .await
            .expect("connect to the dashboard");
        let host = request.host.as_deref().unwrap_or(&self.host);
        let mut text = format!(
            "{} {} HTTP/1.0\r\nHost: {host}\r\n",
            request.method, request.path
        );
        for (name, value) in &request.headers {
            text.push_str(&format!("{name}: {value}\r\n"));
        }
        text.push_str("Content-Length: 0\r\n\r\n");
        stream
            .write_all(text.as_bytes())
            .await
            .expect("send the request");
        stream
    }

    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid()), signal)
            .expect("signal the dashboard");
    }

    pub async fn wait_exit(&mut self) -> std::process::ExitStatus {
        tokio::time::timeout(DEADLINE, self.child.wait())
            .await
            .expect("the dashboard did not exit in time")
            .expect("wait for the dashboard")
    }
}

/// A request: the Host is the dashboard's unless set.
#[derive(Clone, Debug)]
pub struct Request {
    method: &'static str,
    path: String,
    host: Option<String>,
    headers: Vec<(String, String)>,
}

impl Request {
    pub fn get(path: &str) -> Self {
        Self {
            method: "GET",
            path: path.to_owned(),
            host: None,
            headers: Vec::new(),
        }
    }

    pub fn post(path: &str) -> Self {
        Self {
            method: "POST",
            ..Self::get(path)
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn cookie(self, cookie: &str) -> Self {
        self.header("Cookie", cookie)
    }

    pub fn host(mut self, host: &str) -> Self {
        self.host = Some(host.to_owned());
        self
    }
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    fn parse(raw: &str) -> Self {
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw, ""));
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("no status line in {raw:?}"));
        let headers = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.to_ascii_lowercase(), value.trim().to_owned()))
            .collect();
        Self {
            status,
            headers,
            body: body.to_owned(),
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(found, _)| found == name)
            .map(|(_, value)| value.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|error| panic!("{error}: {self:?}"))
    }
}

/// An open SSE feed and the messages read so far: (event name, data as JSON).
pub struct Feed {
    reader: BufReader<TcpStream>,
    pub messages: Vec<(String, Value)>,
}

impl Feed {
    /// Reads messages until `found` picks one (looking at every message read so far), or
    /// panics with `what` at the deadline or the end of the feed.
    pub async fn wait_for<T>(
        &mut self,
        what: &str,
        mut found: impl FnMut(&str, &Value) -> Option<T>,
    ) -> T {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        let mut seen = 0;
        loop {
            for (name, data) in &self.messages[seen..] {
                if let Some(value) = found(name, data) {
                    return value;
                }
            }
            seen = self.messages.len();
            match tokio::time::timeout_at(deadline, self.read_message()).await {
                Ok(true) => {}
                Ok(false) => panic!("the feed ended before {what}: {:#?}", self.messages),
                Err(_) => panic!("timed out waiting for {what}: {:#?}", self.messages),
            }
        }
    }

    /// Reads one message (skipping keep-alive comments); false at the end of the feed.
    async fn read_message(&mut self) -> bool {
        let (mut name, mut data) = (String::from("message"), String::new());
        loop {
            let mut line = String::new();
            if self
                .reader
                .read_line(&mut line)
                .await
                .expect("read the feed")
                == 0
            {
                return false;
            }
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                if !data.is_empty() {
                    let data = serde_json::from_str(&data)
                        .unwrap_or_else(|error| panic!("{error}: {data}"));
                    self.messages.push((name, data));
                    return true;
                }
                continue;
            }
            if let Some(value) = line.strip_prefix("event:") {
                name = value.trim().to_owned();
            } else if let Some(value) = line.strip_prefix("data:") {
                data.push_str(value.trim_start());
            }
        }
    }
}

/// A git repository in a temp dir with one commit: `notes.txt` holding `line one`.
pub struct GitRepo {
    pub dir: crate::common::TempDir,
    /// Where the agents' edit scripts live: outside the repository.
    scripts: crate::common::TempDir,
}

impl GitRepo {
    pub fn new() -> Self {
        let repo = Self {
            dir: crate::common::TempDir::new("dash-repo"),
            scripts: crate::common::TempDir::new("dash-scripts"),
        };
        std::fs::write(repo.dir.file("notes.txt"), "line one\n").unwrap();
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "first"]);
        repo
    }

    /// Runs git in the repository, on no configuration of the user's.
    pub fn git(&self, args: &[&str]) -> String {
        let output = std::process::Command::new("git")
            .args(["-c", "user.name=test", "-c", "user.email=test@example.com"])
            .args(args)
            .current_dir(self.dir.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("run git");
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub fn notes(&self) -> String {
        std::fs::read_to_string(self.dir.file("notes.txt")).unwrap()
    }

    /// Runs a codex job isolated in a worktree of the repository that writes `notes` into
    /// `notes.txt`, and waits for it to complete; its id.
    pub async fn isolated_edit(&self, server: &mut Server, notes: &str) -> String {
        self.edit(server, notes, "worktree").await
    }

    /// As [`Self::isolated_edit`], in the repository itself.
    pub async fn in_place_edit(&self, server: &mut Server, notes: &str) -> String {
        self.edit(server, notes, "none").await
    }

    async fn edit(&self, server: &mut Server, notes: &str, isolation: &str) -> String {
        let script = self
            .scripts
            .file(&format!("{}.sh", crate::common::unique("edit")));
        let quoted = notes.replace('\'', r"'\''");
        std::fs::write(&script, format!("printf '%s' '{quoted}' > notes.txt\n")).unwrap();
        let started = server
            .call(
                "codex",
                json!({
                    "prompt": format!("edit-script={} answer=edited", script.display()),
                    "background": true,
                    "isolation": isolation,
                    "permission": "workspace-write",
                    "workspace": self.dir.path(),
                }),
            )
            .await;
        assert!(!is_error(&started), "{started:#}");
        let id = started["structuredContent"]["job_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let waited = server
            .call("job_wait", json!({"job_ids": [&id], "timeout_secs": 60}))
            .await;
        let job = &waited["structuredContent"]["jobs"][0];
        assert_eq!(job["status"], "completed", "{waited:#}");
        id
    }
}
