// The browser side of planhost's web scenarios: Debian's Chromium driven by playwright-core.
//
// The Rust test (crates/planhost/tests/web) starts the host, prepares its state over the socket
// and runs `node scenarios.mjs NAME` with:
//   PLANHOST_WEB_URL     the page's address (`http://planhost.localhost:PORT/`, from `<state>/web.json`)
//   PLANHOST_WEB_TOKEN   the access token (from the same file)
//   CHROMIUM             the browser executable
//   PLANHOST_E2E_INPUT   the scenario's input, JSON
//   PLANHOST_E2E_BUDGET_MS  how long this process may take before it gives up by itself
//   PLANHOST_SCREENSHOT_DIR  where to save screenshots (only when PLANHOST_SCREENSHOTS=1)
//
// Every line this process prints on stdout is one JSON object:
//   {"checkpoint": NAME, ...}  the page reached a point where the Rust side acts (approve from the
//                              CLI, ...); this process waits for one JSON line on stdin, then
//                              goes on with it;
//   {"result": {...}}          what the scenario saw, printed last, exit 0;
//   {"error": MESSAGE}         the scenario failed in the browser, exit 1.

import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

/** One bounded wait for anything in a page: well under the Rust side's 30 s cap. */
export const WAIT_MS = 8000;

function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (run these scripts through the Rust test)`);
  return value;
}

function emit(object) {
  process.stdout.write(`${JSON.stringify(object)}\n`);
}

const stdinLines = [];
const stdinWaiters = [];
let stdinReader = null;

function nextStdinLine() {
  if (!stdinReader) {
    stdinReader = createInterface({ input: process.stdin });
    stdinReader.on('line', (line) => {
      const waiter = stdinWaiters.shift();
      if (waiter) waiter(line);
      else stdinLines.push(line);
    });
    stdinReader.on('close', () => {
      for (const waiter of stdinWaiters.splice(0)) waiter(null);
    });
  }
  if (stdinLines.length > 0) return Promise.resolve(stdinLines.shift());
  return new Promise((resolve) => stdinWaiters.push(resolve));
}

/**
 * Tells the Rust side that the page reached `name` (with `data`) and waits for it to act; returns
 * the JSON object it answers with.
 */
export async function checkpoint(name, data = {}) {
  emit({ checkpoint: name, ...data });
  const line = await nextStdinLine();
  if (line === null) throw new Error(`stdin closed while waiting after checkpoint ${name}`);
  return JSON.parse(line);
}

/** A CSS attribute selector value, quoted. */
export function quoted(value) {
  return JSON.stringify(String(value));
}

/** The card of one approval. */
export function cardSelector(approvalId) {
  return `article.card[data-approval-id=${quoted(approvalId)}]`;
}

/** The pending publication (`/plan save`) of one id. */
export function publicationSelector(publicationId) {
  return `article.publication[data-publication-id=${quoted(publicationId)}]`;
}

/** The open permission ask of one id. */
export function askSelector(requestId) {
  return `article.ask[data-ask-id=${quoted(requestId)}]`;
}

/** The row of one session in the session list. */
export function sessionSelector(sessionId) {
  return `li.session[data-session-id=${quoted(sessionId)}]`;
}

/**
 * Runs one scenario: `body({ page, context, browser, input, url, origin, login, newPage, screenshot })`
 * returns the result object. Everything is bounded by PLANHOST_E2E_BUDGET_MS.
 */
export async function run(scenarios) {
  const name = process.argv[2];
  const scenario = scenarios[name];
  if (!scenario) {
    emit({ error: `no scenario ${JSON.stringify(name)}; known: ${Object.keys(scenarios).join(', ')}` });
    process.exit(2);
  }
  const budget = Number(process.env.PLANHOST_E2E_BUDGET_MS || 25000);
  const guard = setTimeout(() => {
    emit({ error: `scenario ${name} did not finish within its budget of ${budget} ms` });
    process.exit(3);
  }, budget);
  guard.unref();

  let browser = null;
  // What the page did, for the failure message.
  const consoleErrors = [];
  const traffic = [];
  try {
    const url = env('PLANHOST_WEB_URL');
    const token = env('PLANHOST_WEB_TOKEN');
    const input = JSON.parse(process.env.PLANHOST_E2E_INPUT || '{}');
    const origin = new URL(url).origin;
    browser = await chromium.launch({
      executablePath: env('CHROMIUM'),
      headless: true,
      // Nothing outside loopback: no DNS lookups for Chromium's own services.
      // A scenario may name more hosts it reaches (`input.allowHosts`: the remote page's address).
      args: [
        `--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost , EXCLUDE planhost.localhost${(input.allowHosts || [])
          .map((h) => ` , EXCLUDE ${h}`)
          .join('')}`,
      ],
      // A cold start on a busy machine is the slowest step.
      timeout: 2 * WAIT_MS,
    });
    const defaults = {
      locale: input.locale || 'en-US',
      viewport: { width: 1000, height: 900 },
      deviceScaleFactor: 1,
    };
    /**
     * A new context (the defaults overridden by `options`, e.g. `javaScriptEnabled: false` or a
     * phone's `viewport`) and its page, bounded and watched like the first one, with its `login`.
     */
    const newPage = async (options = {}) => {
      const context = await browser.newContext({ ...defaults, ...options });
      context.setDefaultTimeout(WAIT_MS);
      context.setDefaultNavigationTimeout(WAIT_MS);
      const page = await context.newPage();
      page.on('pageerror', (e) => consoleErrors.push(String(e)));
      page.on('response', (r) => {
        const req = r.request();
        if (req.resourceType() !== 'eventsource') traffic.push(`${req.method()} ${r.url()} -> ${r.status()}`);
      });
      page.on('requestfailed', (req) => traffic.push(`${req.method()} ${req.url()} failed: ${req.failure()?.errorText}`));
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(m.text());
      });

      /** First load with the token: 303 to `/` with the cookie, then the page itself. */
      const login = async () => {
        const response = await page.goto(`${url}?token=${encodeURIComponent(token)}`);
        if (!response) throw new Error('no response to the first load');
        if (response.status() !== 200) {
          throw new Error(`the first load ended in HTTP ${response.status()} at ${page.url()}`);
        }
        if (page.url() !== `${origin}/`) {
          throw new Error(`the first load should land on ${origin}/, not ${page.url()}`);
        }
        return response;
      };
      return { context, page, login };
    };
    const { context, page, login } = await newPage();

    const screenshotDir = process.env.PLANHOST_SCREENSHOT_DIR || '';
    /** Saves a screenshot of `locator` as `file` when screenshots were asked for. */
    const screenshot = async (locator, file) => {
      if (!screenshotDir) return null;
      const path = join(screenshotDir, file);
      // A live update may replace the element while it is being taken: take it again.
      for (let attempt = 1; ; attempt += 1) {
        try {
          await locator.screenshot({ path, animations: 'disabled' });
          return path;
        } catch (error) {
          if (attempt >= 3 || !String(error).includes('not attached')) throw error;
          await new Promise((resolve) => setTimeout(resolve, 300));
        }
      }
    };

    const result = await scenario({ page, context, browser, input, url, origin, login, newPage, screenshot });
    emit({ result: { ...result, consoleErrors } });
    await browser.close();
    browser = null;
    clearTimeout(guard);
    process.exit(0);
  } catch (error) {
    const message = String(error && error.stack ? error.stack : error);
    emit({
      error: `${message}\npage errors: ${JSON.stringify(consoleErrors)}\ntraffic:\n  ${traffic.slice(-20).join('\n  ')}`,
    });
    if (browser) await browser.close().catch(() => {});
    process.exit(1);
  }
}
