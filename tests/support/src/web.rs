//! The dashboard for tests: `cli-agent-mcp dashboard` on a job store in a temp dir, and
//! requests to it with reqwest ([`client`]: no redirect followed, no proxy), each test setting
//! the headers itself, Host included. Server-sent events are read as they arrive ([`sse`]), each
//! wait with a generous deadline. Also: an MCP server on the same store, and background jobs
//! started through it.

pub mod browser;
pub mod sse;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use reqwest::Method;
use reqwest::header::{HOST, HeaderMap};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub use self::sse::Events;
use crate::common;
use crate::mcp::{Server, is_error};

/// The tests' HTTP client: it shows a redirect rather than following it, and goes to
/// 127.0.0.1 directly whatever proxy the environment names.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .expect("an HTTP client")
}

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
    common::wait_for_tagged(tag, 1).await;
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
    client: reqwest::Client,
}

impl Dashboard {
    /// `cli-agent-mcp dashboard` on the store in `state`; waits for its URL.
    pub async fn start(state: &Path) -> Self {
        let mut child = Command::from(common::cam_command())
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
            client: client(),
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
        let answered = async {
            let response = self
                .request(request)
                .send()
                .await
                .expect("send the request");
            Response::read(response).await
        };
        tokio::time::timeout(DEADLINE, answered)
            .await
            .expect("the dashboard did not answer in time")
    }

    /// Opens an SSE feed; panics unless it answers 200.
    pub async fn feed(&self, request: &Request) -> Feed {
        let response = tokio::time::timeout(DEADLINE, self.request(request).send())
            .await
            .expect("no feed headers in time")
            .expect("open the feed");
        assert_eq!(response.status(), 200, "{response:?}");
        Feed {
            response,
            events: Events::default(),
            messages: Vec::new(),
        }
    }

    /// `request` to the dashboard, with its Host unless it sets another.
    fn request(&self, request: &Request) -> reqwest::RequestBuilder {
        let url = format!("http://{}{}", self.host, request.path);
        let mut builder = self.client.request(request.method.clone(), url);
        if let Some(host) = &request.host {
            builder = builder.header(HOST, host);
        }
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        builder
    }

    #[cfg(unix)]
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
    method: Method,
    path: String,
    host: Option<String>,
    headers: Vec<(String, String)>,
}

impl Request {
    pub fn get(path: &str) -> Self {
        Self {
            method: Method::GET,
            path: path.to_owned(),
            host: None,
            headers: Vec::new(),
        }
    }

    pub fn post(path: &str) -> Self {
        Self {
            method: Method::POST,
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
    headers: HeaderMap,
    pub body: String,
}

impl Response {
    async fn read(response: reqwest::Response) -> Self {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.text().await.expect("read the response");
        Self {
            status,
            headers,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)?.to_str().ok()
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|error| panic!("{error}: {self:?}"))
    }
}

/// An open SSE feed and the messages read so far: (event name, data as JSON).
pub struct Feed {
    response: reqwest::Response,
    events: Events,
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

    /// Reads one message; false at the end of the feed.
    async fn read_message(&mut self) -> bool {
        let Some(event) = self.events.next(&mut self.response).await else {
            return false;
        };
        let data = serde_json::from_str(&event.data)
            .unwrap_or_else(|error| panic!("{error}: {}", event.data));
        self.messages.push((event.name, data));
        true
    }
}

/// A git repository in a temp dir with one commit: `notes.txt` holding `line one`.
pub struct GitRepo {
    pub dir: TempDir,
    /// Where the agents' edit scripts live: outside the repository.
    scripts: TempDir,
}

impl GitRepo {
    #[allow(clippy::new_without_default)] // a repository made on disk is no default value
    pub fn new() -> Self {
        let repo = Self {
            dir: common::temp_dir("dash-repo"),
            scripts: common::temp_dir("dash-scripts"),
        };
        std::fs::write(repo.dir.path().join("notes.txt"), "line one\n").unwrap();
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
        std::fs::read_to_string(self.dir.path().join("notes.txt")).unwrap()
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
            .path()
            .join(format!("{}.sh", common::unique("edit")));
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
