//! `classify_command` latency on generated command lines from ~20 bytes to 4 KiB.
//!
//! ```sh
//! cargo bench -p planhost-core --bench shell_classify
//! ```
//!
//! Input: deterministic lines composed of exploration commands (`ls`, `git log -p`, `rg`,
//! `find`, `sed -n`, here-documents, substitutions, pipelines, lists, subshells), some with a
//! write-capable part, grouped into size bands. Each line is classified once per round;
//! figures are per call. Target: p99 ≤ 50 µs for lines up to 4 KiB. "parse" counts the lines
//! that parse at all: a here-document piece in the middle of a line runs to its end unclosed,
//! and such a line is refused early, so the p99 of the larger bands is the lines that parse.
#![allow(clippy::print_stdout)] // A bench binary reports on stdout.

use std::hint::black_box;
use std::time::{Duration, Instant};

use planhost_core::{Dialect, NotProven, classify_command};
use planhost_test_support::Rng;

const ROUNDS: usize = 5;
const LINES_PER_BAND: usize = 400;
const BANDS: &[(usize, usize)] = &[(20, 64), (64, 256), (256, 1024), (1024, 2048), (2048, 4096)];

const PIECES: &[&str] = &[
    "ls -la src",
    "cat README.md",
    "git status --porcelain",
    "git log -p -3 -- src/lib.rs",
    "rg -n 'fn main' --type rust src",
    "find . -name '*.rs' -type f",
    "grep -rn TODO .",
    "head -n 20 Cargo.toml",
    "sed -n '1,50p' src/main.rs",
    "sed -e 's/a/b/g' -e '/x/d' f",
    "wc -l src/*.rs",
    "cat a 2>/dev/null || echo none",
    "echo \"$(git rev-parse HEAD)\"",
    "diff <(sort a) <(sort b)",
    "jq '.dependencies' package.json",
    "cat <<'EOF'\nsome text here\nEOF",
    "for f in *.md; do wc -l \"$f\"; done",
    "git diff --stat HEAD~1",
    "LC_ALL=C sort f | uniq -c",
    "echo x > out.txt",
    "find . -name x -delete",
];

const JOINS: &[&str] = &[" | ", " && ", " || ", "; ", "\n"];

fn line(rng: &mut Rng, min: usize, max: usize) -> String {
    let target = min + rng.below(max - min);
    let mut out = String::new();
    while out.len() < target {
        let piece = PIECES[rng.below(PIECES.len())];
        if !out.is_empty() && out.len() + piece.len() + 4 > max {
            break;
        }
        if !out.is_empty() {
            out.push_str(JOINS[rng.below(JOINS.len())]);
        }
        match rng.below(6) {
            0 => {
                out.push_str("( ");
                out.push_str(piece);
                out.push_str(" )");
            }
            1 => {
                out.push_str("{ ");
                out.push_str(piece);
                out.push_str("; }");
            }
            _ => out.push_str(piece),
        }
    }
    out
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = (sorted.len().saturating_sub(1) as f64 * p).round() as usize;
    sorted.get(index).copied().unwrap_or(Duration::ZERO)
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn run(mode: &str, line: &str) {
    match mode {
        "parse" => {
            let options = brush_parser::ParserOptions::default();
            let _ = black_box(brush_parser::Parser::new(line.as_bytes(), &options).parse_program());
        }
        "tokenize" => {
            let options = brush_parser::TokenizerOptions::default();
            let _ = black_box(brush_parser::uncached_tokenize_str(line, &options));
        }
        _ => {
            black_box(classify_command(line, Dialect::Posix));
        }
    }
}

fn main() {
    if let Some(line) = std::env::var_os("SHELL_CLASSIFY_LINE") {
        let line = line.to_string_lossy();
        for _ in 0..5 {
            let start = Instant::now();
            let verdict = classify_command(&line, Dialect::Posix);
            println!("{:.1} µs {verdict:?}", micros(start.elapsed()));
        }
        return;
    }
    // `SHELL_CLASSIFY_MODE=parse` times brush-parser alone (tokenize + parse), `tokenize` its
    // tokenizer alone: the floor under the classifier.
    let mode = std::env::var("SHELL_CLASSIFY_MODE").unwrap_or_default();
    let mode = mode.as_str();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    println!(
        "                                         every call                  best of {ROUNDS} per line        lines that parse (best)"
    );
    println!(
        "band (bytes)   lines  parse  read-only  p50 µs   p99 µs   max µs    p50 µs   p99 µs   max µs     p50 µs   p99 µs"
    );
    // `SHELL_CLASSIFY_BAND=N` (0-based) runs one band only.
    let only_band: Option<usize> = std::env::var("SHELL_CLASSIFY_BAND")
        .ok()
        .and_then(|b| b.parse().ok());
    for (band, &(min, max)) in BANDS.iter().enumerate() {
        let lines: Vec<String> = (0..LINES_PER_BAND)
            .map(|_| line(&mut rng, min, max))
            .collect();
        if only_band.is_some_and(|only| only != band) {
            continue;
        }
        let read_only = lines
            .iter()
            .filter(|l| classify_command(l, Dialect::Posix).is_read_only())
            .count();
        let parses: Vec<bool> = lines
            .iter()
            .map(|l| classify_command(l, Dialect::Posix).reason() != Some(&NotProven::Unparsed))
            .collect();
        let parse = parses.iter().filter(|p| **p).count();
        // Every call, and per line the best of its rounds (the cost without preemption: on a
        // loaded machine a call that loses the CPU measures a scheduler slice, milliseconds).
        let mut times = Vec::with_capacity(lines.len() * ROUNDS);
        let mut best = vec![Duration::MAX; lines.len()];
        for _ in 0..ROUNDS {
            for (i, l) in lines.iter().enumerate() {
                let start = Instant::now();
                run(mode, black_box(l));
                let took = start.elapsed();
                times.push(took);
                best[i] = best[i].min(took);
            }
        }
        if std::env::var_os("SHELL_CLASSIFY_SLOWEST").is_some() {
            let mut worst: Vec<(Duration, &String)> = best.iter().copied().zip(&lines).collect();
            worst.sort();
            for (t, l) in worst.iter().rev().take(2) {
                println!("slow {:.1} µs: {l:?}", micros(*t));
            }
        }
        // The lines that parse, alone: the cost of reading a whole line of that length.
        let mut parsed_best: Vec<Duration> = best
            .iter()
            .zip(&parses)
            .filter_map(|(t, p)| p.then_some(*t))
            .collect();
        parsed_best.sort();
        times.sort();
        best.sort();
        println!(
            "{:>5}..{:<5}  {:>6}  {:>5}  {:>9}  {:>7.1}  {:>7.1}  {:>7.1}   {:>7.1}  {:>7.1}  {:>7.1}    {:>7.1}  {:>7.1}",
            min,
            max,
            lines.len(),
            parse,
            read_only,
            micros(percentile(&times, 0.50)),
            micros(percentile(&times, 0.99)),
            micros(*times.last().unwrap_or(&Duration::ZERO)),
            micros(percentile(&best, 0.50)),
            micros(percentile(&best, 0.99)),
            micros(*best.last().unwrap_or(&Duration::ZERO)),
            micros(percentile(&parsed_best, 0.50)),
            micros(percentile(&parsed_best, 0.99)),
        );
    }
}
