//! A job's changes and diff as HTML, rendered here and not in the page: the diff is untrusted
//! text (whatever the agent wrote), so every character of it is escaped on the server and the
//! page inserts the result as it is, never parsing the diff itself. One collapsible section
//! per file, each line classed for its color; binary files named, not dumped.

use cli_agent_engine::git::{ChangeKind, Changes, FileChange};

use crate::jobs::store::JobId;

/// The most of a diff rendered on the page; `jobs diff` prints the whole.
const DIFF_CHARS: usize = 400_000;
/// How git marks the start of a file's diff.
const FILE_START: &str = "diff --git ";

/// The files table (kind, path, lines added and removed) and the diff, per file.
pub fn render(id: &JobId, changes: &Changes, diff: &str) -> String {
    let mut html = String::with_capacity(diff.len() * 3 / 2 + 1024);
    html.push_str(&files_table(changes));
    if diff.trim().is_empty() {
        html.push_str(r#"<p class="note">The diff is empty: the run changed no file.</p>"#);
        return html;
    }
    let mut left = DIFF_CHARS;
    for file in split_files(diff) {
        let shown = cut_at_line(file, left);
        let cut = shown.len() < file.len();
        html.push_str(&file_section(shown, &changes.files, cut));
        left = left.saturating_sub(shown.len());
        if cut {
            html.push_str(&format!(
                r#"<p class="note">The diff is longer than shown: <code>cli-agent-mcp jobs diff {id}</code> prints it all.</p>"#
            ));
            break;
        }
    }
    html
}

/// A note in place of the diff, when it cannot be read.
pub fn trouble(message: &str) -> String {
    format!(
        r#"<p class="trouble">The diff cannot be read: {}</p>"#,
        escape(message)
    )
}

/// One line for a files table's caption or a button's result: `2 files (+3 −1): a, b`.
pub fn summary(changes: &Changes) -> String {
    let names: Vec<&str> = changes
        .files
        .iter()
        .map(|file| file.path.as_str())
        .collect();
    let count = changes.files_changed;
    format!(
        "{count} file{} (+{} −{}){}{}",
        if count == 1 { "" } else { "s" },
        changes.lines_added,
        changes.lines_removed,
        if names.is_empty() { "" } else { ": " },
        names.join(", ")
    )
}

fn files_table(changes: &Changes) -> String {
    if changes.files.is_empty() {
        return String::new();
    }
    let mut html = format!(
        r#"<table class="changes"><caption>{}</caption><tbody>"#,
        escape(&summary_counts(changes))
    );
    for file in &changes.files {
        html.push_str(&format!(
            r#"<tr><td class="change {kind}">{kind}</td><td class="path">{path}</td>{lines}</tr>"#,
            kind = kind_name(file.change),
            path = escape(&display_path(file)),
            lines = line_counts(file),
        ));
    }
    html.push_str("</tbody></table>");
    html
}

fn summary_counts(changes: &Changes) -> String {
    let count = changes.files_changed;
    format!(
        "{count} file{} changed, +{} −{}",
        if count == 1 { "" } else { "s" },
        changes.lines_added,
        changes.lines_removed
    )
}

fn line_counts(file: &FileChange) -> String {
    match file.binary {
        true => r#"<td class="binary" colspan="2">binary</td>"#.to_owned(),
        false => format!(
            r#"<td class="plus">+{}</td><td class="minus">−{}</td>"#,
            file.lines_added, file.lines_removed
        ),
    }
}

fn kind_name(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Added => "added",
        ChangeKind::Modified => "modified",
        ChangeKind::Deleted => "deleted",
        ChangeKind::Renamed => "renamed",
    }
}

fn display_path(file: &FileChange) -> String {
    match &file.old_path {
        Some(old) => format!("{old} → {}", file.path),
        None => file.path.clone(),
    }
}

/// The diff cut where each file's starts.
fn split_files(diff: &str) -> Vec<&str> {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            diff.match_indices(&format!("\n{FILE_START}"))
                .map(|(at, _)| at + 1),
        )
        .collect();
    let ends = starts.iter().skip(1).copied().chain([diff.len()]);
    starts
        .iter()
        .zip(ends)
        .map(|(&start, end)| &diff[start..end])
        .collect()
}

/// At most `limit` bytes of `text`, ending at the end of a line (or at least one line).
fn cut_at_line(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    // A newline byte is always a character boundary.
    let newline = |bytes: &[u8]| bytes.iter().rposition(|&b| b == b'\n');
    let end = newline(&text.as_bytes()[..limit])
        .or_else(|| text.find('\n'))
        .map_or(text.len(), |at| at + 1);
    &text[..end]
}

/// A file's diff as a collapsible section, titled by its entry in `files` when its header
/// names one (git quotes unusual paths, which then title it as git wrote them).
fn file_section(text: &str, files: &[FileChange], cut: bool) -> String {
    let header = text.lines().next().unwrap_or_default();
    let file = files.iter().find(|file| header == file_header(file));
    let title = match file {
        Some(file) => format!(
            r#"<span class="change {kind}">{kind}</span> <code>{path}</code>"#,
            kind = kind_name(file.change),
            path = escape(&display_path(file)),
        ),
        None => format!(
            "<code>{}</code>",
            escape(header.strip_prefix(FILE_START).unwrap_or(header))
        ),
    };
    let binary = file.is_some_and(|file| file.binary)
        || text.lines().any(|line| line.starts_with("Binary files "));
    let body = match binary {
        true => r#"<p class="note">A binary file: its content is not shown.</p>"#.to_owned(),
        false => format!(r#"<pre class="diff">{}</pre>"#, diff_lines(text)),
    };
    let more = match cut {
        true => r#"<p class="note">The rest of the diff is not shown.</p>"#,
        false => "",
    };
    format!(r#"<details class="diff-file" open><summary>{title}</summary>{body}{more}</details>"#)
}

/// How `git diff-tree` heads the file's diff.
fn file_header(file: &FileChange) -> String {
    let old = file.old_path.as_deref().unwrap_or(&file.path);
    format!("{FILE_START}a/{old} b/{}", file.path)
}

/// Each line of a file's diff in a span classed for its color. Before the first hunk, lines
/// are the header (`+++` is a file name there, an added line in a hunk).
fn diff_lines(text: &str) -> String {
    let mut html = String::with_capacity(text.len() * 3 / 2);
    let mut in_hunk = false;
    for line in text.lines() {
        in_hunk |= line.starts_with("@@");
        let class = match line.as_bytes().first() {
            _ if !in_hunk => "meta",
            Some(b'@') => "hunk",
            Some(b'+') => "add",
            Some(b'-') => "del",
            Some(b'\\') => "meta",
            _ => "context",
        };
        // Each span a block of its own (style.css): no newline between them.
        html.push_str(&format!(r#"<span class="{class}">{}</span>"#, escape(line)));
    }
    html
}

/// `text` safe inside an element or a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[path = "diff_view_tests.rs"]
mod tests;
