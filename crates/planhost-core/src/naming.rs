//! The one slug rule and the plan file names built from it: immutable submissions under
//! `.pi/plan/` and the published plan under `.pi/plans/`.

/// Longest slug taken from a title: enough to recognise the plan in a directory listing.
pub const MAX_SLUG: usize = 48;

/// The slug of a title with no ASCII letter or digit.
pub const FALLBACK_SLUG: &str = "plan";

/// Lowercase ASCII letters and digits of `title`, runs of anything else folded to one `-`, at
/// most [`MAX_SLUG`] bytes, never empty. Only `[a-z0-9-]` can come out, so no title can make a
/// path component of its own (`..`, `/`, NUL).
pub fn slug(title: &str) -> String {
    let mut out = String::new();
    let mut gap = false;
    for c in title.chars() {
        if out.len() >= MAX_SLUG {
            break;
        }
        if c.is_ascii_alphanumeric() {
            if gap && !out.is_empty() {
                out.push('-');
            }
            gap = false;
            out.push(c.to_ascii_lowercase());
        } else {
            gap = true;
        }
    }
    let trimmed = out.trim_end_matches('-');
    if trimmed.is_empty() {
        FALLBACK_SLUG.to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// `<slug>-<proposal id>.md`: a SubmitPlan's immutable artifact, unique by the UUID.
pub fn artifact_file_name(title: &str, proposal_id: &crate::ProposalId) -> String {
    format!("{}-{proposal_id}.md", slug(title))
}

/// `<slug>-<stamp>.md` for the first attempt, then `<slug>-<stamp>-2.md`, `-3`, …: a first
/// publication's name. `stamp` is the civil UTC time the caller formatted (`yyyymmdd-hhmmss`);
/// a collision takes the next number, so names never run out and are never stamped in the
/// future.
pub fn publication_file_name(title: &str, stamp: &str, attempt: u32) -> String {
    match attempt {
        0 | 1 => format!("{}-{stamp}.md", slug(title)),
        n => format!("{}-{stamp}-{n}.md", slug(title)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_safe_and_readable() {
        assert_eq!(slug("Add OAuth: login & logout!"), "add-oauth-login-logout");
        assert_eq!(slug("日本語"), "plan");
        assert_eq!(slug("../../etc/passwd"), "etc-passwd");
        assert_eq!(slug(&"a".repeat(300)).len(), MAX_SLUG);
        assert_eq!(slug("-- x --"), "x");
        assert_eq!(
            artifact_file_name("Add login", &"id1".into()),
            "add-login-id1.md".to_owned()
        );
    }

    #[test]
    fn publication_names_count_up_without_end() {
        assert_eq!(
            publication_file_name("Plan: add login", "20261201-091500", 1),
            "plan-add-login-20261201-091500.md"
        );
        assert_eq!(
            publication_file_name("", "20261201-091500", 102),
            "plan-20261201-091500-102.md"
        );
    }
}
