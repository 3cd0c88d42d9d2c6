//! Capture-parser throughput against a plain newline scan of the same chunks, in the same run.
//!
//! ```sh
//! cargo bench -p planhost-core --bench capture
//! ```
//!
//! Input: a generated ~50 MiB assistant text (prose, lists, fenced code holding example
//! delimiters, some CRLF sections, one 64 KiB plan in the middle), cut into random chunk sizes.
//! Floor: `chunk.bytes().filter(|b| *b == b'\n').count()` over the same chunks, which LLVM
//! vectorises; `chunk.split('\n').count()` is reported too. Target: parser ≥ 0.5× the floor.
#![allow(clippy::print_stdout)] // A bench binary reports on stdout.

use std::hint::black_box;
use std::time::{Duration, Instant};

use planhost_core::ProposedPlanParser;
use planhost_test_support::Rng;
const TARGET_BYTES: usize = 50 * 1024 * 1024;
const PLAN_BYTES: usize = 64 * 1024;
const ROUNDS: usize = 7;

const WORDS: &[&str] = &[
    "the",
    "plan",
    "reads",
    "config",
    "module",
    "and",
    "tests",
    "before",
    "changing",
    "parser",
    "state",
    "café",
    "→",
    "fence",
    "error",
    "handler",
    "with",
    "a",
    "small",
    "step",
    "into",
    "repository",
    "function",
    "returns",
    "value",
    "计划",
    "check",
    "file",
    "path",
    "of",
];

fn prose_line(rng: &mut Rng, out: &mut String) {
    let target = 20 + rng.below(100);
    let start = out.len();
    while out.len() - start < target {
        out.push_str(WORDS[rng.below(WORDS.len())]);
        out.push(' ');
    }
}

fn section(rng: &mut Rng, out: &mut String) {
    let eol = if rng.below(8) == 0 { "\r\n" } else { "\n" };
    match rng.below(10) {
        0 | 1 => {
            let fence = if rng.below(2) == 0 { "```" } else { "~~~~" };
            out.push_str(fence);
            out.push_str("rust");
            out.push_str(eol);
            for i in 0..(3 + rng.below(20)) {
                if i == 2 && rng.below(4) == 0 {
                    out.push_str("<proposed_plan>");
                } else {
                    out.push_str("    let x = parse(&input)?; // ");
                    prose_line(rng, out);
                }
                out.push_str(eol);
            }
            out.push_str(fence);
            out.push_str(eol);
        }
        2 | 3 => {
            for _ in 0..(2 + rng.below(6)) {
                out.push_str("- ");
                prose_line(rng, out);
                out.push_str(eol);
            }
        }
        _ => {
            for _ in 0..(1 + rng.below(6)) {
                prose_line(rng, out);
                out.push_str(eol);
            }
        }
    }
    out.push_str(eol);
}

fn generate() -> String {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut text = String::with_capacity(TARGET_BYTES + PLAN_BYTES * 2);
    while text.len() < TARGET_BYTES / 2 {
        section(&mut rng, &mut text);
    }
    text.push_str("<proposed_plan>\n# Plan\n");
    let body_start = text.len();
    while text.len() - body_start < PLAN_BYTES {
        section(&mut rng, &mut text);
    }
    text.push_str("</proposed_plan>\n");
    while text.len() < TARGET_BYTES {
        section(&mut rng, &mut text);
    }
    text
}

/// Cuts `text` into chunks of 1..=max bytes, moved back to char boundaries.
fn chunks(text: &str, max: usize, seed: u64) -> Vec<&str> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(text.len() / (max / 2).max(1) + 1);
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + 1 + rng.below(max)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

/// Best time of each job over `ROUNDS` rounds, the jobs interleaved within a round so that load
/// from other processes hits them alike. Returns the times and each job's last result.
fn time_interleaved(jobs: &mut [&mut dyn FnMut() -> usize]) -> Vec<(Duration, usize)> {
    let mut best = vec![(Duration::MAX, 0); jobs.len()];
    for _ in 0..ROUNDS {
        for (job, slot) in jobs.iter_mut().zip(best.iter_mut()) {
            let start = Instant::now();
            let result = black_box(job());
            *slot = (slot.0.min(start.elapsed()), result);
        }
    }
    best
}

fn mb_per_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / (1024.0 * 1024.0) / d.as_secs_f64()
}

fn main() {
    let text = generate();
    let bytes = text.len();
    println!(
        "input: {:.1} MiB, {} lines; best of {ROUNDS} rounds",
        bytes as f64 / 1048576.0,
        text.split('\n').count()
    );
    for (label, max) in [
        ("token-sized chunks 1..=32 B", 32),
        ("chunks 1 B..=64 KiB", 65_536),
    ] {
        let parts = chunks(&text, max, 0xD1B5_4A32_D192_ED03);
        let mut parse_job = || {
            let mut parser = ProposedPlanParser::new(0);
            for c in &parts {
                parser.push(black_box(c));
            }
            match parser.finish() {
                Ok(Some(plan)) => plan.markdown.len(),
                Ok(None) | Err(_) => 0,
            }
        };
        let mut filter_job = || {
            parts
                .iter()
                .map(|c| black_box(c).bytes().filter(|b| *b == b'\n').count())
                .sum()
        };
        let mut split_job = || parts.iter().map(|c| black_box(c).split('\n').count()).sum();
        let times = time_interleaved(&mut [&mut parse_job, &mut filter_job, &mut split_job]);
        let [(parse, plan_len), (count, newlines), (split, pieces)] = times[..] else {
            return;
        };
        // CRLF sections shrink by their `\r`s; any plan this size is the one.
        assert!(plan_len > PLAN_BYTES / 2, "the plan was not captured");
        assert_eq!(pieces, newlines + parts.len(), "the scans disagree");
        println!("{label} ({} chunks):", parts.len());
        println!(
            "  parser                 {:>9.1} MiB/s",
            mb_per_s(bytes, parse)
        );
        println!(
            "  bytes().filter() floor {:>9.1} MiB/s",
            mb_per_s(bytes, count)
        );
        println!(
            "  split('\\n') scan       {:>9.1} MiB/s",
            mb_per_s(bytes, split)
        );
        println!(
            "  ratio parser/filter {:.2}x, parser/split {:.2}x (target >= 0.5x of filter)",
            count.as_secs_f64() / parse.as_secs_f64(),
            split.as_secs_f64() / parse.as_secs_f64(),
        );
    }
}
