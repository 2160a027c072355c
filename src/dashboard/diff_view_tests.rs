use super::*;

fn file(path: &str, change: ChangeKind, added: u64, removed: u64, binary: bool) -> FileChange {
    FileChange {
        path: path.to_owned(),
        old_path: None,
        change,
        lines_added: added,
        lines_removed: removed,
        binary,
    }
}

fn changes(files: Vec<FileChange>) -> Changes {
    Changes {
        files_changed: files.len() as u64,
        lines_added: files.iter().map(|file| file.lines_added).sum(),
        lines_removed: files.iter().map(|file| file.lines_removed).sum(),
        files,
        not_tracked: None,
    }
}

const DIFF: &str = "diff --git a/src/a.rs b/src/a.rs
index 1111111..2222222 100644
--- a/src/a.rs
+++ b/src/a.rs
@@ -1,2 +1,2 @@
 keep
-<script>alert(1)</script>
+++counter & \"quoted\"
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..3333333
Binary files /dev/null and b/logo.png differ
";

#[test]
fn each_file_is_a_section_its_lines_classed_and_every_character_escaped() {
    let id: JobId = "job_aaaaaaaaaaaaaaaa".parse().unwrap();
    let changes = changes(vec![
        file("src/a.rs", ChangeKind::Modified, 1, 1, false),
        file("logo.png", ChangeKind::Added, 0, 0, true),
    ]);
    let html = render(&id, &changes, DIFF);

    assert!(!html.contains("<script>"), "{html}");
    assert!(
        html.contains(r#"<span class="del">-&lt;script&gt;alert(1)&lt;/script&gt;</span>"#),
        "{html}"
    );
    assert!(
        html.contains(r#"<span class="add">+++counter &amp; &quot;quoted&quot;</span>"#),
        "an added line starting with ++ is an added line: {html}"
    );
    assert!(
        html.contains(r#"<span class="meta">+++ b/src/a.rs</span>"#),
        "{html}"
    );
    assert!(html.contains(r#"<span class="hunk">@@ -1,2 +1,2 @@</span>"#));
    assert!(html.contains(r#"<span class="context"> keep</span>"#));
    assert_eq!(
        html.matches(r#"<details class="diff-file" open>"#).count(),
        2
    );
    assert!(
        html.contains(r#"<span class="change added">added</span> <code>logo.png</code>"#),
        "{html}"
    );
    assert!(html.contains("A binary file"), "{html}");
    assert!(html.contains(r#"<td class="binary" colspan="2">binary</td>"#));
    assert!(html.contains(r#"<td class="plus">+1</td><td class="minus">−1</td>"#));
}

#[test]
fn a_diff_past_the_cap_is_cut_at_a_line_saying_where_the_rest_is() {
    let id: JobId = "job_aaaaaaaaaaaaaaaa".parse().unwrap();
    let line = "+é".repeat(50);
    let body: String = (0..DIFF_CHARS / 50).map(|_| format!("{line}\n")).collect();
    let big = format!("diff --git a/x b/x\n@@ -0,0 +1 @@\n{body}");
    let diff = format!("{big}diff --git a/y b/y\n@@ -0,0 +1 @@\n+y\n");
    let html = render(&id, &Changes::default(), &diff);
    assert!(
        html.contains("The rest of the diff is not shown"),
        "a cut file says so"
    );
    assert!(html.contains(&format!("cli-agent-mcp jobs diff {id}")));
    assert!(!html.contains("b/y"), "the file past the cap is left out");
    assert!(html.len() < DIFF_CHARS * 3, "{}", html.len());
}

#[test]
fn an_empty_diff_says_so_and_a_summary_names_the_files() {
    let id: JobId = "job_aaaaaaaaaaaaaaaa".parse().unwrap();
    assert!(render(&id, &Changes::default(), "").contains("changed no file"));
    let changes = changes(vec![file("a", ChangeKind::Deleted, 0, 3, false)]);
    assert_eq!(summary(&changes), "1 file (+0 −3): a");
    assert_eq!(
        trouble("<x>"),
        r#"<p class="trouble">The diff cannot be read: &lt;x&gt;</p>"#
    );
}
