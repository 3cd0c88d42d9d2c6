//! Validation of SubmitPlan input (seed 000 §5). The bytes themselves are never changed.

use crate::{CoreError, Result};

/// Longest accepted title, in characters: a title is a label, not a second plan.
pub const MAX_TITLE_CHARS: usize = 200;
/// Longest accepted question, in characters: one question a person can answer at a glance.
pub const MAX_QUESTION_CHARS: usize = 2_000;
/// Largest accepted plan, in bytes: far above any plan a person reads, small enough that a
/// runaway model cannot fill the disk or the database through SubmitPlan.
pub const MAX_PLAN_BYTES: usize = 4 * 1024 * 1024;

/// The SubmitPlan tool input, exactly as the agent sent it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SubmitPlanInput {
    /// A short label for the plan.
    pub title: String,
    /// The plan itself; written byte for byte.
    pub markdown: String,
    /// What the person is asked to decide.
    pub question: String,
}

impl SubmitPlanInput {
    /// Checks sizes and emptiness without touching the bytes.
    pub fn validate(&self) -> Result<()> {
        if self.title.trim().is_empty() {
            return Err(CoreError::TitleInvalid("is empty"));
        }
        if self.title.chars().count() > MAX_TITLE_CHARS {
            return Err(CoreError::TitleInvalid("is longer than 200 characters"));
        }
        if self.title.chars().any(char::is_control) {
            return Err(CoreError::TitleInvalid("contains control characters"));
        }
        if self.question.chars().count() > MAX_QUESTION_CHARS {
            return Err(CoreError::QuestionInvalid("is longer than 2000 characters"));
        }
        if self.markdown.is_empty() {
            return Err(CoreError::MarkdownInvalid("is empty"));
        }
        if self.markdown.len() > MAX_PLAN_BYTES {
            return Err(CoreError::MarkdownInvalid("is larger than 4 MiB"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(title: &str, markdown: &str, question: &str) -> SubmitPlanInput {
        SubmitPlanInput {
            title: title.into(),
            markdown: markdown.into(),
            question: question.into(),
        }
    }

    #[test]
    fn accepts_exact_limits() {
        let title = "t".repeat(MAX_TITLE_CHARS);
        let question = "q".repeat(MAX_QUESTION_CHARS);
        let md = "m".repeat(MAX_PLAN_BYTES);
        assert_eq!(input(&title, &md, &question).validate(), Ok(()));
        assert_eq!(input("x", "y", "").validate(), Ok(()));
    }

    #[test]
    fn rejects_each_bad_field_with_its_code() {
        let cases = [
            (input("", "m", "q"), "PLAN_TITLE_INVALID"),
            (input("  \t", "m", "q"), "PLAN_TITLE_INVALID"),
            (
                input(&"t".repeat(MAX_TITLE_CHARS + 1), "m", "q"),
                "PLAN_TITLE_INVALID",
            ),
            (input("a\nb", "m", "q"), "PLAN_TITLE_INVALID"),
            (
                input("t", "m", &"q".repeat(MAX_QUESTION_CHARS + 1)),
                "PLAN_QUESTION_INVALID",
            ),
            (input("t", "", "q"), "PLAN_MARKDOWN_INVALID"),
            (
                input("t", &"m".repeat(MAX_PLAN_BYTES + 1), "q"),
                "PLAN_MARKDOWN_INVALID",
            ),
        ];
        for (case, code) in cases {
            assert_eq!(
                case.validate().map_err(|e| e.code().as_str()),
                Err(code),
                "{case:?}"
            );
        }
    }
}
