//! Grep vs ripgrep on a generated tree of 100,000 files.
//!
//! Run: `cargo bench -p planhost-tools --bench grep` (needs `rg` on PATH). Set
//! `PLANHOST_BENCH_FILES` to change the file count and `PLANHOST_BENCH_RUNS` the runs per side.
//! The tree is generated in a temp dir, both sides are warmed once, then run alternately; the
//! median wall times and their ratio are printed. Target: planhost ≤ 1.5× rg.

// A bench binary reports on stdout; that is its whole job.
#![allow(clippy::print_stdout)]

use std::error::Error;
use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use planhost_fs::Workspace;
use planhost_tools::{GREP_MAX_LIMIT, GrepMode, GrepOutput, GrepRequest, ToolContext, grep};

const DEFAULT_FILES: usize = 100_000;
const FILES_PER_DIR: usize = 100;
const DEFAULT_RUNS: usize = 5;
/// One file in this many holds the needle, so files mode lists ~2,000 paths (under the limit).
const NEEDLE_EVERY: usize = 50;
const NEEDLE: &str = "needle_token";
const WORDS: &[&str] = &[
    "fn", "let", "match", "struct", "impl", "return", "self", "value", "error", "result", "config",
    "path", "buffer", "index", "count", "string", "vector", "option", "thread", "lock",
];

fn main() -> Result<(), Box<dyn Error>> {
    let files = env_usize("PLANHOST_BENCH_FILES", DEFAULT_FILES)?;
    let runs = env_usize("PLANHOST_BENCH_RUNS", DEFAULT_RUNS)?;
    let tmp = tempfile::tempdir()?;
    let root = tmp.path();
    let started = Instant::now();
    let bytes = generate(root, files)?;
    println!(
        "tree: {files} files, {:.1} MiB, generated in {:.1}s at {}",
        bytes as f64 / (1024.0 * 1024.0),
        started.elapsed().as_secs_f64(),
        root.display()
    );
    let ctx = ToolContext::new(Workspace::new(root)?);
    println!("runs per side: {runs} (after one warm-up each); times are medians");
    println!(
        "{:<8} {:>10} {:>12} {:>7}  check",
        "mode", "rg ms", "planhost ms", "ratio"
    );
    for (mode, flag) in [
        (GrepMode::Files, "-l"),
        (GrepMode::Count, "-c"),
        (GrepMode::Content, "-n"),
    ] {
        compare(&ctx, root, mode, flag, runs)?;
    }
    Ok(())
}

fn compare(
    ctx: &ToolContext,
    root: &Path,
    mode: GrepMode,
    flag: &str,
    runs: usize,
) -> Result<(), Box<dyn Error>> {
    let request = GrepRequest {
        pattern: NEEDLE.to_owned(),
        path: None,
        glob: None,
        mode,
        context: None,
        context_before: None,
        context_after: None,
        case_insensitive: false,
        limit: Some(GREP_MAX_LIMIT),
    };
    let rg_entries = run_rg(root, flag)?.1;
    let ours_entries = entries(&grep(ctx, &request)?.output);
    let mut rg_times = Vec::with_capacity(runs);
    let mut our_times = Vec::with_capacity(runs);
    for _ in 0..runs {
        rg_times.push(run_rg(root, flag)?.0);
        let started = Instant::now();
        let result = grep(ctx, &request)?;
        our_times.push(started.elapsed());
        std::hint::black_box(result);
    }
    let (rg, ours) = (median(&mut rg_times), median(&mut our_times));
    let ratio = ours.as_secs_f64() / rg.as_secs_f64();
    let check = if rg_entries == ours_entries {
        format!("{ours_entries} entries on both sides")
    } else {
        format!("MISMATCH: rg {rg_entries}, planhost {ours_entries}")
    };
    println!(
        "{:<8} {:>10.1} {:>12.1} {:>6.2}x  {check}",
        format!("{mode:?}").to_lowercase(),
        rg.as_secs_f64() * 1e3,
        ours.as_secs_f64() * 1e3,
        ratio
    );
    Ok(())
}

/// Runs `rg <flag> NEEDLE .` in `root`, reading its whole output through a pipe (writing to
/// /dev/null would let rg stop early). Returns wall time and output line count.
fn run_rg(root: &Path, flag: &str) -> Result<(Duration, usize), Box<dyn Error>> {
    let started = Instant::now();
    let out = Command::new("rg")
        .args([flag, "--no-config", NEEDLE, "."])
        .current_dir(root)
        .output()?;
    let elapsed = started.elapsed();
    if !out.status.success() {
        return Err(format!("rg failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok((elapsed, out.stdout.iter().filter(|b| **b == b'\n').count()))
}

fn entries(output: &GrepOutput) -> usize {
    match output {
        GrepOutput::Files { files } => files.len(),
        GrepOutput::Content { lines } => lines.len(),
        GrepOutput::Count { counts } => counts.len(),
    }
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

/// Writes `files` text files of 0.5–1.5 KiB in directories of [`FILES_PER_DIR`], plus a `.git`
/// directory and a `.gitignore` so ripgrep and planhost apply the same ignore rules.
fn generate(root: &Path, files: usize) -> Result<u64, Box<dyn Error>> {
    fs_err::create_dir(root.join(".git"))?;
    fs_err::write(root.join(".gitignore"), "*.log\n")?;
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(seed >> 33).unwrap_or(0)
    };
    let mut total = 0u64;
    let mut body = String::new();
    for i in 0..files {
        let dir = root.join(format!("d{:04}", i / FILES_PER_DIR));
        if i % FILES_PER_DIR == 0 {
            fs_err::create_dir(&dir)?;
        }
        body.clear();
        let target = 512 + next() % 1024;
        let mut line = 0;
        while body.len() < target {
            line += 1;
            for _ in 0..8 {
                body.push_str(WORDS[next() % WORDS.len()]);
                body.push(' ');
            }
            if i % NEEDLE_EVERY == 0 && line % 7 == 3 {
                body.push_str(NEEDLE);
            }
            body.push('\n');
        }
        // Every 97th file is ignored by .gitignore; it holds the needle too.
        let name = if i % 97 == 0 {
            format!("f{i}.log")
        } else {
            format!("f{i}.txt")
        };
        let mut file = fs_err::File::create(dir.join(name))?;
        file.write_all(body.as_bytes())?;
        total += body.len() as u64;
    }
    Ok(total)
}

fn env_usize(name: &str, default: usize) -> Result<usize, Box<dyn Error>> {
    match std::env::var(name) {
        Ok(v) => Ok(v.parse()?),
        Err(_) => Ok(default),
    }
}
