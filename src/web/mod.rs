//! The web front the three HTTP servers stand on: `serve --http` (`transport::http`), the
//! dashboard (`dashboard`) and a run's question endpoint (`mcp::delegate_questions`). Each
//! builds its router from these parts and words its own refusals; none of them knows the
//! others, and this module knows none of them.
//!
//! - `token`: the one token type, random or given, compared in constant time;
//! - `check`: a check in front of routes as a tower layer (answer the request, or let it by),
//!   which `guard` (Host and Origin: DNS-rebinding protection), `bearer` (the
//!   `Authorization: Bearer` token) and `limits`' body size are;
//! - `limits`: the body size, and the requests and streams at once as a tower layer that holds
//!   a request's place until its response body ends;
//! - `cookies`: the `Cookie` header as an extractor, and the session cookie's `Set-Cookie`;
//! - `mcp`: rmcp's Streamable HTTP service at `/mcp`, behind the guard rather than rmcp's own
//!   Host check;
//! - `refusal`: the one shape of a refusal.

mod bearer;
mod check;
mod cookies;
mod guard;
mod limits;
mod mcp;
mod refusal;
mod token;

pub use self::bearer::{Bearer, BearerWording};
pub use self::check::CheckLayer;
pub use self::cookies::{Cookies, session_cookie};
pub use self::guard::{Allowed, Guard, NotAnOrigin, Refused};
pub use self::limits::{BodyLimit, Counted, Slots, SlotsLayer};
pub use self::mcp::{MCP_PATH, mcp_router};
pub use self::token::Token;
