//! The fixtures the MCP conformance suite calls: tools, resources and prompts with the fixed
//! names and answers its scenarios check. Compiled only with the `conformance-fixtures`
//! feature (the conformance tests' build, `scripts/test conformance`), never into a release,
//! and even then offered only with the hidden `serve --http … --conformance-fixtures`.
//!
//! [`Fixtured`] is the HTTP handler then: it answers the fixtures' names itself and passes
//! everything else to the agents' handler, so the fixtures go through the same server,
//! transport and limits as the agent tools. One file per family of fixtures:
//! `tools` (the `tools-call-*` scenarios, with `elicitation`'s forms) and `documents`
//! (resources and prompts).

mod documents;
mod elicitation;
mod handler;
mod tools;

pub use self::handler::Fixtured;
