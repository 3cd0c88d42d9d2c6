//! Line diffs of plans, bounded: whatever two plans an agent submits, a diff takes at most a
//! fixed time and yields at most a fixed number of lines, and it never runs on the threads that
//! serve the protocol (see `handlers::changes`).

use std::time::{Duration, Instant};

use planhost_protocol::{DiffHunk, DiffLine, DiffStatus, DiffTag, LineDiff};
use similar::{Algorithm, ChangeTag, TextDiff};

/// Lines on both sides together beyond which no comparison is tried.
const MAX_LINES: usize = 200_000;
/// The time a comparison may take; past it the diff is completed coarsely (correct, but with
/// larger hunks than needed).
const DEADLINE: Duration = Duration::from_millis(200);
/// Lines of hunks a diff may show; beyond, it is too large to show.
const MAX_SHOWN: usize = 20_000;
/// Lines of context around each change.
const CONTEXT: usize = 3;

fn count_lines(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        memchr::memchr_iter(b'\n', text.as_bytes()).count() + usize::from(!text.ends_with('\n'))
    }
}

fn n(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// The diff from `base` to `plan`.
pub(crate) fn line_diff(base: &str, plan: &str) -> LineDiff {
    let (base_lines, plan_lines) = (count_lines(base), count_lines(plan));
    let mut out = LineDiff {
        status: DiffStatus::Identical,
        base_lines: n(base_lines),
        plan_lines: n(plan_lines),
        inserted: 0,
        deleted: 0,
        hunks: Vec::new(),
    };
    if base == plan {
        return out;
    }
    out.status = DiffStatus::TooLarge;
    if base_lines + plan_lines > MAX_LINES {
        return out;
    }
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .deadline(Instant::now() + DEADLINE)
        .diff_lines(base, plan);
    let mut shown = 0usize;
    let mut hunks = Vec::new();
    for group in diff.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..last.old_range().end;
        let new = first.new_range().start..last.new_range().end;
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                shown += 1;
                if shown > MAX_SHOWN {
                    out.inserted = 0;
                    out.deleted = 0;
                    return out;
                }
                let tag = match change.tag() {
                    ChangeTag::Equal => DiffTag::Equal,
                    ChangeTag::Delete => {
                        out.deleted += 1;
                        DiffTag::Delete
                    }
                    ChangeTag::Insert => {
                        out.inserted += 1;
                        DiffTag::Insert
                    }
                };
                let text = change.value();
                let text = text.strip_suffix('\n').unwrap_or(text);
                let text = text.strip_suffix('\r').unwrap_or(text);
                lines.push(DiffLine {
                    tag,
                    text: text.to_owned(),
                });
            }
        }
        hunks.push(DiffHunk {
            old_start: n(old.start + 1),
            old_lines: n(old.len()),
            new_start: n(new.start + 1),
            new_lines: n(new.len()),
            lines,
        });
    }
    out.status = DiffStatus::Changed;
    out.hunks = hunks;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_text_has_no_hunks() {
        let d = line_diff("a\nb\n", "a\nb\n");
        assert_eq!(d.status, DiffStatus::Identical);
        assert!(d.hunks.is_empty());
        assert_eq!((d.base_lines, d.plan_lines), (2, 2));
    }

    #[test]
    fn a_two_line_change_in_150_lines_is_one_small_hunk_with_line_numbers() {
        let base: String = (1..=150).map(|i| format!("line {i}\n")).collect();
        let plan = base
            .replace("line 70\n", "line seventy\n")
            .replace("line 71\n", "line seventy-one\n");
        let d = line_diff(&base, &plan);
        assert_eq!(d.status, DiffStatus::Changed);
        assert_eq!((d.inserted, d.deleted), (2, 2));
        assert_eq!(d.hunks.len(), 1);
        let h = &d.hunks[0];
        assert_eq!(
            (h.old_start, h.old_lines, h.new_start, h.new_lines),
            (67, 8, 67, 8)
        );
        assert_eq!(h.lines.len(), 10, "3 + 2 deleted + 2 inserted + 3");
        assert_eq!(h.lines[3].tag, DiffTag::Delete);
        assert_eq!(h.lines[3].text, "line 70");
    }

    #[test]
    fn an_empty_base_inserts_everything() {
        let d = line_diff("", "a\nb");
        assert_eq!(
            (d.status, d.inserted, d.deleted),
            (DiffStatus::Changed, 2, 0)
        );
        assert_eq!(d.hunks[0].new_start, 1);
    }

    #[test]
    fn a_diff_too_large_to_show_has_no_hunks_and_no_counts() {
        let base: String = (0..MAX_SHOWN).map(|i| format!("a{i}\n")).collect();
        let plan: String = (0..MAX_SHOWN).map(|i| format!("b{i}\n")).collect();
        let d = line_diff(&base, &plan);
        assert_eq!(d.status, DiffStatus::TooLarge);
        assert_eq!((d.inserted, d.deleted, d.hunks.len()), (0, 0, 0));
    }

    #[test]
    fn too_many_lines_are_not_compared() {
        let big = "x\n".repeat(MAX_LINES);
        let d = line_diff(&big, "y\n");
        assert_eq!(d.status, DiffStatus::TooLarge);
        assert!(d.hunks.is_empty());
    }
}
