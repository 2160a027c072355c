//! copilot's `--usage-output-file`: the token counts it never prints on stdout, per model, for
//! the whole session (a resumed session's file counts its earlier turns too).

use std::collections::HashMap;

use serde::Deserialize;

use crate::event::Usage;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    model_metrics: HashMap<String, ModelMetrics>,
}

#[derive(Deserialize)]
struct ModelMetrics {
    #[serde(default)]
    usage: Tokens,
}

/// `inputTokens` holds the cache reads and `outputTokens` the reasoning, as OpenAI counts.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Tokens {
    input_tokens: u64,
    cache_read_tokens: u64,
    output_tokens: u64,
    reasoning_tokens: u64,
}

/// The usage summed over the models the file lists.
pub(super) fn read(text: &str) -> Option<Usage> {
    let report: Report = serde_json::from_str(text).ok()?;
    let mut usage = Usage {
        input_tokens: 0,
        cached_input_tokens: 0,
        output_tokens: 0,
        reasoning_tokens: Some(0),
        cost_usd: None,
    };
    for tokens in report.model_metrics.values().map(|model| &model.usage) {
        usage.input_tokens = usage.input_tokens.saturating_add(tokens.input_tokens);
        usage.cached_input_tokens = usage
            .cached_input_tokens
            .saturating_add(tokens.cache_read_tokens);
        usage.output_tokens = usage.output_tokens.saturating_add(tokens.output_tokens);
        usage.reasoning_tokens = usage
            .reasoning_tokens
            .map(|n| n.saturating_add(tokens.reasoning_tokens));
    }
    Some(usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_summed_and_a_file_of_another_shape_reads_as_none() {
        let text = r#"{"totalPremiumRequestCost": 0, "modelMetrics": {
            "gpt-5.4": {"requests": {"count": 3}, "usage": {"inputTokens": 300,
                "outputTokens": 21, "cacheReadTokens": 60, "cacheWriteTokens": 0,
                "reasoningTokens": 9}},
            "gpt-5-mini": {"usage": {"inputTokens": 10, "outputTokens": 2}}}}"#;
        let usage = read(text).expect("usage");
        assert_eq!(
            (
                usage.input_tokens,
                usage.cached_input_tokens,
                usage.output_tokens
            ),
            (310, 60, 23)
        );
        assert_eq!(usage.reasoning_tokens, Some(9));
        assert!(read(r#"{"modelMetrics": []}"#).is_none());
        assert!(read("not json").is_none());
    }
}
