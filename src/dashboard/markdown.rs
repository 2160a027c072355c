//! An agent's answer as HTML. The answer is untrusted text (it repeats whatever the agent read),
//! so raw HTML in it is shown as text, never passed through; links keep only schemes that
//! cannot run code; images become links, since loading them would reach the internet.

use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd, html};

/// Schemes a link may keep; any other becomes `#`. A link without a scheme is relative.
const SAFE_SCHEMES: [&str; 3] = ["http", "https", "mailto"];

pub fn render(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_GFM;
    let events = Parser::new_ext(markdown, options).map(defuse);
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, events);
    out
}

/// The event with its HTML made text and its link made safe.
fn defuse(event: Event<'_>) -> Event<'_> {
    match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::HtmlBlock) => Event::Start(Tag::CodeBlock(CodeBlockKind::Indented)),
        Event::End(TagEnd::HtmlBlock) => Event::End(TagEnd::CodeBlock),
        Event::Start(
            Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }
            | Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            },
        ) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    }
}

/// `url` if it is relative or has a safe scheme, else `#`. Browsers drop whitespace and
/// control characters inside a scheme (`java\tscript:`), so the check does too.
fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let squeezed: String = url
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_control())
        .collect();
    let scheme_end = squeezed.find([':', '/', '?', '#']);
    let safe = match scheme_end {
        Some(at) if squeezed[at..].starts_with(':') => SAFE_SCHEMES
            .iter()
            .any(|scheme| squeezed[..at].eq_ignore_ascii_case(scheme)),
        _ => true,
    };
    if safe { url } else { CowStr::Borrowed("#") }
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
