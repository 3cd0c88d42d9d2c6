//! Grep: regex search over the workspace with ripgrep's library crates.

use std::ffi::OsString;
use std::fs::File;
use std::ops::ControlFlow;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::overrides::{Override, OverrideBuilder};
use planhost_core::{FileCount, GrepLine, GrepOutput, GrepResult, LineKind};
use serde::{Deserialize, Serialize};

use crate::context::{ReadTarget, ToolContext};
use crate::error::{Result, ToolError};
use crate::glob::checked_limit;
use crate::grep_sink::{Binary, Capped, Collector};
use crate::walk::{Filters, Start, display_name, open_file_at, open_start};

/// Entries (files, counts or lines) returned when the request gives no `limit`.
pub const GREP_DEFAULT_LIMIT: usize = 1000;
/// Largest `limit` accepted.
pub const GREP_MAX_LIMIT: usize = 20_000;
/// Largest context, before or after; wider context belongs to Read.
pub const GREP_MAX_CONTEXT: usize = 50;
/// Entries collected before the walk stops, bounding memory on a pathological tree. Results are
/// sorted after collection, so below this bound they are deterministic.
pub const GREP_MAX_COLLECT: usize = 200_000;

/// What Grep reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum GrepMode {
    /// Paths of files with at least one match (like `rg -l`).
    #[default]
    Files,
    /// Matching lines, with optional context (like `rg -n`).
    Content,
    /// Matching-line counts per file (like `rg -c`).
    Count,
}

/// `Grep { pattern, path?, glob?, mode?, context?, contextBefore?, contextAfter?,
/// caseInsensitive?, limit? }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrepRequest {
    /// A Rust-regex pattern, matched per line.
    pub pattern: String,
    /// File or directory to search (default: the workspace root).
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files matching this glob (ripgrep `-g` semantics; `!` excludes).
    #[serde(default)]
    pub glob: Option<String>,
    /// What to report (default `files`).
    #[serde(default)]
    pub mode: GrepMode,
    /// Lines of context before and after each match (content mode only; ignored otherwise).
    #[serde(default)]
    pub context: Option<usize>,
    /// Lines before each match; overrides `context`.
    #[serde(default)]
    pub context_before: Option<usize>,
    /// Lines after each match; overrides `context`.
    #[serde(default)]
    pub context_after: Option<usize>,
    /// Match case-insensitively.
    #[serde(default)]
    pub case_insensitive: bool,
    /// Most entries to return: files, counts or lines (default [`GREP_DEFAULT_LIMIT`]).
    #[serde(default)]
    pub limit: Option<usize>,
}

struct FileHits {
    path: String,
    matches: u64,
    lines: Vec<(u64, LineKind, String)>,
}

/// Shared state of one parallel search.
struct Shared {
    hits: Mutex<Vec<FileHits>>,
    collected: AtomicUsize,
    skipped_non_utf8: AtomicU64,
    truncated: AtomicBool,
    /// Set once [`GREP_MAX_COLLECT`] is reached: the walk stops and queued files are dropped.
    quit: AtomicBool,
}

/// Most search threads, as ripgrep's walker caps them.
const MAX_THREADS: usize = 12;
/// Files queued per search thread between the walk and the searchers.
const QUEUE_PER_THREAD: usize = 64;

/// A file the walk kept, waiting for a search thread.
struct Job {
    /// The directory that listed it; the file is opened relative to this handle.
    dir: Arc<OwnedFd>,
    name: OsString,
    /// Its path relative to the search root.
    relative: PathBuf,
}

/// What every search needs, shared by the search threads.
struct Search<'a> {
    request: &'a GrepRequest,
    target: &'a ReadTarget,
    limit: usize,
    shared: Shared,
}

/// Runs Grep.
pub fn grep(ctx: &ToolContext, request: &GrepRequest) -> Result<GrepResult> {
    let limit = checked_limit(request.limit, GREP_DEFAULT_LIMIT, GREP_MAX_LIMIT)?;
    let (before, after) = context_lines(request)?;
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(request.case_insensitive)
        .line_terminator(Some(b'\n'))
        .build(&request.pattern)
        .map_err(|e| ToolError::InvalidRegex {
            message: e.to_string(),
        })?;
    let target = ctx.resolve_read(request.path.as_deref().unwrap_or("."))?;
    ctx.require_exists(&target)?;
    let overrides = match &request.glob {
        None => Override::empty(),
        Some(glob) => OverrideBuilder::new(target.absolute())
            .add(glob)
            .and_then(|b| b.build())
            .map_err(|e| ToolError::InvalidGlob {
                message: e.to_string(),
            })?,
    };
    let mut searcher_builder = SearcherBuilder::new();
    searcher_builder
        .line_number(matches!(request.mode, GrepMode::Content))
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .before_context(before)
        .after_context(after);

    let search = Search {
        request,
        target: &target,
        limit,
        shared: Shared {
            hits: Mutex::new(Vec::new()),
            collected: AtomicUsize::new(0),
            skipped_non_utf8: AtomicU64::new(0),
            truncated: AtomicBool::new(false),
            quit: AtomicBool::new(false),
        },
    };
    // The walk reaches every directory and file through handles opened without following links
    // (see `walk`), so a directory swapped for a symlink mid-walk is skipped, never searched.
    match open_start(ctx, &target)? {
        // A FIFO, socket or device is not searched, as ripgrep's walker does not yield it.
        Start::Other => {}
        Start::File(file) => {
            let mut searcher = searcher_builder.build();
            search.one(&mut searcher, &matcher, &file, || Some(target.display()));
        }
        Start::Dir(tree) => {
            let threads = std::thread::available_parallelism()
                .map_or(1, std::num::NonZero::get)
                .min(MAX_THREADS);
            let (queue, jobs) = mpsc::sync_channel::<Job>(threads * QUEUE_PER_THREAD);
            let jobs = Mutex::new(jobs);
            let filters = Filters::new(overrides);
            std::thread::scope(|scope| {
                for _ in 0..threads {
                    scope.spawn(|| search.worker(&jobs, searcher_builder.build(), matcher.clone()));
                }
                tree.walk(&filters, |found| {
                    if search.shared.quit.load(Ordering::Relaxed) {
                        return ControlFlow::Break(());
                    }
                    let job = Job {
                        dir: Arc::clone(found.dir),
                        name: found.name.to_owned(),
                        relative: found.relative.to_owned(),
                    };
                    match queue.send(job) {
                        Ok(()) => ControlFlow::Continue(()),
                        Err(_) => ControlFlow::Break(()),
                    }
                });
                // Closing the queue lets the search threads finish what is queued and return.
                drop(queue);
            });
        }
    }
    Ok(assemble(request.mode, limit, search.shared))
}

impl Search<'_> {
    /// One search thread: takes queued files until the walk is done and the queue is empty.
    fn worker(
        &self,
        jobs: &Mutex<mpsc::Receiver<Job>>,
        mut searcher: Searcher,
        matcher: RegexMatcher,
    ) {
        let _drain = DrainOnPanic {
            jobs,
            quit: &self.shared.quit,
        };
        loop {
            let Ok(job) = next_job(jobs) else { return };
            // After the cap, keep draining so the walk is never left blocked on a full queue.
            if self.shared.quit.load(Ordering::Relaxed) {
                continue;
            }
            // Unreadable files, and names no longer a regular file, are skipped, as ripgrep
            // skips them.
            let Some(file) = open_file_at(&job.dir, &job.name) else {
                continue;
            };
            self.one(&mut searcher, &matcher, &file, || {
                display_name(self.target, &job.relative)
            });
        }
    }

    /// Searches one opened file and records its hits under the name `shown` gives (`None`: the
    /// path is not UTF-8, so the file is only counted).
    fn one(
        &self,
        searcher: &mut Searcher,
        matcher: &RegexMatcher,
        file: &File,
        shown: impl FnOnce() -> Option<String>,
    ) {
        let mut sink = Collector::new(self.request.mode, self.limit);
        if searcher.search_file(matcher, file, &mut sink).is_err()
            || sink.binary == Binary::Yes
            || sink.matches == 0
        {
            return;
        }
        if !opened_inside(file, self.target) {
            return;
        }
        let Some(path) = shown() else {
            self.shared.skipped_non_utf8.fetch_add(1, Ordering::Relaxed);
            return;
        };
        if self.shared.record(self.request.mode, sink, path).is_break() {
            self.shared.quit.store(true, Ordering::Relaxed);
        }
    }
}

/// The next queued file; an error once the walk is done and the queue is empty.
fn next_job(jobs: &Mutex<mpsc::Receiver<Job>>) -> std::result::Result<Job, mpsc::RecvError> {
    match jobs.lock() {
        Ok(guard) => guard.recv(),
        Err(poisoned) => poisoned.into_inner().recv(),
    }
}

/// Should a search thread panic, stops the walk and keeps draining the queue, so the walk is
/// never left blocked on a full queue that no thread reads (the panic then surfaces when the
/// scope joins).
struct DrainOnPanic<'a> {
    jobs: &'a Mutex<mpsc::Receiver<Job>>,
    quit: &'a AtomicBool,
}

impl Drop for DrainOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.quit.store(true, Ordering::Relaxed);
            while next_job(self.jobs).is_ok() {}
        }
    }
}

impl Shared {
    fn record(&self, mode: GrepMode, sink: Collector, path: String) -> ControlFlow<()> {
        if sink.capped == Capped::Yes {
            self.truncated.store(true, Ordering::Relaxed);
        }
        let added = match mode {
            GrepMode::Files | GrepMode::Count => 1,
            GrepMode::Content => sink.lines.len(),
        };
        let hits = FileHits {
            path,
            matches: sink.matches,
            lines: sink.lines,
        };
        match self.hits.lock() {
            Ok(mut guard) => guard.push(hits),
            Err(poisoned) => poisoned.into_inner().push(hits),
        }
        if self.collected.fetch_add(added, Ordering::Relaxed) + added >= GREP_MAX_COLLECT {
            self.truncated.store(true, Ordering::Relaxed);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}

fn assemble(mode: GrepMode, limit: usize, shared: Shared) -> GrepResult {
    let mut hits = match shared.hits.into_inner() {
        Ok(hits) => hits,
        Err(poisoned) => poisoned.into_inner(),
    };
    hits.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    let mut truncated = shared.truncated.into_inner();
    let output = match mode {
        GrepMode::Files => {
            truncated |= hits.len() > limit;
            GrepOutput::Files {
                files: hits.into_iter().take(limit).map(|h| h.path).collect(),
            }
        }
        GrepMode::Count => {
            truncated |= hits.len() > limit;
            let counts = hits.into_iter().take(limit);
            GrepOutput::Count {
                counts: counts
                    .map(|h| FileCount {
                        path: h.path,
                        count: h.matches,
                    })
                    .collect(),
            }
        }
        GrepMode::Content => {
            let mut lines = Vec::new();
            'files: for hit in hits {
                for (line_number, kind, text) in hit.lines {
                    if lines.len() == limit {
                        truncated = true;
                        break 'files;
                    }
                    lines.push(GrepLine {
                        path: hit.path.clone(),
                        line_number,
                        kind,
                        text,
                    });
                }
            }
            GrepOutput::Content { lines }
        }
    };
    GrepResult {
        output,
        truncated,
        skipped_non_utf8: shared.skipped_non_utf8.into_inner(),
    }
}

fn context_lines(request: &GrepRequest) -> Result<(usize, usize)> {
    let (before, after) = match request.mode {
        GrepMode::Files | GrepMode::Count => (0, 0),
        GrepMode::Content => {
            let both = request.context.unwrap_or(0);
            (
                request.context_before.unwrap_or(both),
                request.context_after.unwrap_or(both),
            )
        }
    };
    if before > GREP_MAX_CONTEXT || after > GREP_MAX_CONTEXT {
        return Err(ToolError::invalid(format!(
            "context must be at most {GREP_MAX_CONTEXT} lines"
        )));
    }
    Ok((before, after))
}

/// Whether the file actually opened lies under the search root.
///
/// The walk reaches every file through handles opened without following links, so this holds
/// by construction; it stays as a second line of defence (a directory renamed out of the
/// workspace after the walk opened it, say). The kernel's own name for the open fd settles it:
/// checked only for files with matches, so the cost is one `readlink` per reported file. Fails
/// closed.
fn opened_inside(file: &File, target: &ReadTarget) -> bool {
    match target {
        ReadTarget::Outside(_) => true,
        ReadTarget::Inside(root) => {
            use std::os::fd::AsRawFd as _;
            let link = format!("/proc/self/fd/{}", file.as_raw_fd());
            fs_err::read_link(link).is_ok_and(|real| real.starts_with(root.absolute()))
        }
    }
}
