#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::wildcard_enum_match_arm
)]
//! End-to-end tests of the browser approval page (`planhost serve --web`): the real binary in a
//! temporary home, its state made and checked over the socket, the page driven by real Chromium
//! (Debian's package, through playwright-core in `browser/`) or by plain HTTP.
//!
//! Needs node >= 20. Chromium is `$CHROMIUM`, else Debian's (`/usr/lib/chromium/chromium` or
//! `/usr/bin/chromium`), else the one `@sparticuz/chromium` ships on npm (pinned in
//! `browser/package-lock.json`, unpacked with the libraries a bare machine lacks; forced with
//! `PLANHOST_NPM_CHROMIUM=1`). `npm ci` runs in `browser/` when what it pins is not installed.
//! `PLANHOST_SCREENSHOTS=1` saves the card's screenshots into `docs/screenshots/`.

mod activity;
mod answers;
mod browser;
mod http;
mod overview;
mod page;
mod refusals;
mod remote;
mod runs;
mod sessions;
mod support;
