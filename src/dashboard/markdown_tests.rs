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
