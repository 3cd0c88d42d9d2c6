// The Chromium for a machine that has none installed: the one @sparticuz/chromium ships on npm
// (pinned in package-lock.json), unpacked into the temporary directory with the libraries it
// needs, which a bare machine lacks (its Amazon Linux 2023 set). Prints one JSON line:
// {"executablePath": ..., "libraryPath": ...}; the Rust side passes the library path to the
// scenarios as LD_LIBRARY_PATH.

// The package unpacks its libraries only where it believes it runs on Amazon Linux 2023 (a
// Lambda); it decides when it is loaded, so the variable is set before the import.
process.env.AWS_EXECUTION_ENV ??= 'AWS_Lambda_nodejs22.x';
const { default: chromium } = await import('@sparticuz/chromium');
const executablePath = await chromium.executablePath();
process.stdout.write(`${JSON.stringify({ executablePath, libraryPath: process.env.LD_LIBRARY_PATH ?? null })}\n`);
