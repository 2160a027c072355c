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
mod tests {
    use super::render;

    #[test]
    fn markdown_becomes_html() {
        let html = render(
            "# Title\n\nSome **bold** and `code`.\n\n- a\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |\n",
        );
        for part in [
            "<h1>Title</h1>",
            "<strong>bold</strong>",
            "<code>code</code>",
            "<li>a</li>",
            "<td>1</td>",
        ] {
            assert!(html.contains(part), "{part} not in {html}");
        }
    }

    #[test]
    fn raw_html_is_shown_as_text_never_passed_through() {
        let html = render(
            "<script>alert(1)</script>\n\ninline <img src=x onerror=alert(2)> and <b>bold</b>\n",
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(
            html.contains("&lt;img src=x onerror=alert(2)&gt;"),
            "{html}"
        );
    }

    #[test]
    fn links_keep_safe_schemes_and_lose_the_rest() {
        let html = render(
            "[a](https://example.com/x) [b](javascript:alert(1)) [c](java%0ascript:x) \
             [d](JaVa&#9;Script:alert(1)) [e](data:text/html,x) [f](docs/readme.md) [g](mailto:me@x)",
        );
        assert!(
            html.contains(r#"<a href="https://example.com/x">a</a>"#),
            "{html}"
        );
        assert!(html.contains(r#"<a href="docs/readme.md">f</a>"#), "{html}");
        assert!(html.contains(r#"<a href="mailto:me@x">g</a>"#), "{html}");
        for name in ['b', 'd', 'e'] {
            assert!(
                html.contains(&format!(r##"<a href="#">{name}</a>"##)),
                "{name}: {html}"
            );
        }
        assert!(!html.to_ascii_lowercase().contains("javascript:"), "{html}");
        assert!(!html.contains("data:"), "{html}");
    }

    #[test]
    fn images_become_links_and_load_nothing() {
        let html = render("![a cat](https://example.com/cat.png) ![x](javascript:alert(1))");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains(r#"<a href="https://example.com/cat.png">a cat</a>"#),
            "{html}"
        );
        assert!(html.contains(r##"<a href="#">x</a>"##), "{html}");
    }
}
