//! The long codex run the stream benchmarks feed the server (`benches/server.rs`) and the
//! engine's per-event stages (`shared/benches/engine.rs`), so both measure the same stream;
//! the engine's lifecycle test runs it too (`tests/fast/engine_lifecycle.rs`).

/// A long codex run of `events` lines, about 100 bytes each, as the issue measured: in every
/// ten, a shell command started and completed (with a line of output), seven reasoning items
/// and an agent message; a final message.
pub fn long_codex_stream(events: usize) -> String {
    let mut stream = String::with_capacity(events * 110);
    stream.push_str(
        "{\"type\":\"thread.started\",\"thread_id\":\"0199a213-81c0-7800-8aa1-bbab2a035a53\"}\n",
    );
    stream.push_str("{\"type\":\"turn.started\"}\n");
    let body = events.saturating_sub(4);
    for n in 0..body {
        let line = match n % 10 {
            0 => format!(
                "{{\"type\":\"item.started\",\"item\":{{\"id\":\"item_{n}\",\"type\":\"command_execution\",\"command\":\"cargo test m{n}\",\"aggregated_output\":\"\",\"exit_code\":null,\"status\":\"in_progress\"}}}}\n"
            ),
            1 => format!(
                "{{\"type\":\"item.completed\",\"item\":{{\"id\":\"item_{0}\",\"type\":\"command_execution\",\"command\":\"cargo test m{0}\",\"aggregated_output\":\"ok\\n\",\"exit_code\":0,\"status\":\"completed\"}}}}\n",
                n - 1
            ),
            8 => format!(
                "{{\"type\":\"item.completed\",\"item\":{{\"id\":\"item_{n}\",\"type\":\"agent_message\",\"text\":\"m{n} passes.\"}}}}\n"
            ),
            _ => format!(
                "{{\"type\":\"item.completed\",\"item\":{{\"id\":\"item_{n}\",\"type\":\"reasoning\",\"text\":\"**Step {n}**\"}}}}\n"
            ),
        };
        stream.push_str(&line);
    }
    stream.push_str("{\"type\":\"item.completed\",\"item\":{\"id\":\"item_last\",\"type\":\"agent_message\",\"text\":\"long-run-done\"}}\n");
    stream.push_str("{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":9000,\"cached_input_tokens\":0,\"output_tokens\":900,\"reasoning_output_tokens\":90}}\n");
    stream
}
