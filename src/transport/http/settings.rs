//! What `--http` and its options ask for ([`Options`]), checked into the front's parts
//! ([`Settings`]), each refusal worded to name the setting that allows the request.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::http::StatusCode;

use super::auth::{self, TokenError};
#[cfg(feature = "conformance-fixtures")]
use super::conformance;
use crate::web::{Allowed, Bearer, BodyLimit, CheckLayer, Counted, Guard, Refused, Slots};

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error(
        "--http {0} is not a loopback address, and no token is set: anyone who can reach it \
         could run agents as you. Set CAM_HTTP_TOKEN or --http-token-file, or bind 127.0.0.1"
    )]
    PublicWithoutToken(SocketAddr),
    #[error(transparent)]
    Token(#[from] TokenError),
    #[error("--http-allowed-origin {0}")]
    Origin(#[from] crate::web::NotAnOrigin),
    #[cfg(feature = "conformance-fixtures")]
    #[error(transparent)]
    Fixtures(#[from] conformance::NoKey),
}

/// What `--http` and its options ask for, unchecked.
#[derive(Debug)]
pub struct Options {
    pub token_file: Option<std::path::PathBuf>,
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    pub max_body_bytes: usize,
    pub max_requests: u32,
    pub max_streams: u32,
    /// Also offer the fixtures the MCP conformance suite calls.
    #[cfg(feature = "conformance-fixtures")]
    pub fixtures: bool,
}

/// The checked settings of `--http`: the front's parts for this server.
pub struct Settings {
    pub(super) addr: SocketAddr,
    pub(super) guard: CheckLayer<Guard>,
    pub(super) bearer: Option<CheckLayer<Bearer>>,
    pub(super) body: CheckLayer<BodyLimit>,
    pub(super) requests: Arc<Slots>,
    pub(super) streams: Arc<Slots>,
    #[cfg(feature = "conformance-fixtures")]
    pub(super) fixtures: Option<Arc<conformance::Fixtures>>,
}

impl Settings {
    pub fn new(addr: SocketAddr, args: &Options) -> Result<Self, SettingsError> {
        let token = auth::load(args.token_file.as_deref())?;
        if token.is_none() && !addr.ip().is_loopback() {
            return Err(SettingsError::PublicWithoutToken(addr));
        }
        let allowed =
            Allowed::serving(addr, &args.allowed_hosts).with_origins(&args.allowed_origins)?;
        Ok(Self {
            addr,
            guard: CheckLayer::new(Guard::new(allowed, guard_wording)),
            bearer: token.map(|token| CheckLayer::new(Bearer::new(token, auth::WORDING))),
            body: CheckLayer::new(BodyLimit::new(
                args.max_body_bytes,
                "--http-max-body-bytes or CAM_HTTP_MAX_BODY_BYTES",
            )),
            requests: Arc::new(Slots::new(
                Counted::Requests,
                args.max_requests,
                "--http-max-requests or CAM_HTTP_MAX_REQUESTS",
            )),
            streams: Arc::new(Slots::new(
                Counted::Streams,
                args.max_streams,
                "--http-max-streams or CAM_HTTP_MAX_STREAMS",
            )),
            #[cfg(feature = "conformance-fixtures")]
            fixtures: match args.fixtures {
                true => Some(Arc::new(conformance::Fixtures::new()?)),
                false => None,
            },
        })
    }
}

/// A refusal of the guard, naming the setting that allows the request.
fn guard_wording(refused: &Refused) -> (StatusCode, String) {
    match refused {
        Refused::NoHost => (
            StatusCode::BAD_REQUEST,
            "bad request: no Host header".to_owned(),
        ),
        Refused::Host(host) => (
            StatusCode::FORBIDDEN,
            format!(
                "forbidden: Host {host:?} is not this server's (DNS-rebinding protection); \
                 allow it with --http-allowed-host or CAM_HTTP_ALLOWED_HOSTS"
            ),
        ),
        Refused::Origin(origin) => (
            StatusCode::FORBIDDEN,
            format!(
                "forbidden: Origin {origin:?} may not call this server (DNS-rebinding protection); \
                 allow it with --http-allowed-origin or CAM_HTTP_ALLOWED_ORIGINS"
            ),
        ),
    }
}
