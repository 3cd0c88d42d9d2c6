// The browser scenarios of planhost's web page, one per Rust test in crates/planhost/tests/web
// (see lib.mjs for how they are run and what they print). Each returns what it saw; the Rust side
// asserts it, and asserts the host's own state over its socket.

import http from 'node:http';

import {
  WAIT_MS,
  askSelector,
  cardSelector,
  checkpoint,
  publicationSelector,
  run,
  sessionSelector,
} from './lib.mjs';

/** How long the page may take to show an answer given elsewhere (contract: within ~2 s). */
const LIVE_MS = 5000;

/** The card's status attribute and text, and whether its form is still there. */
async function cardState(card) {
  return {
    status: await card.getAttribute('data-status'),
    statusText: (await card.locator('.status').innerText()).trim(),
    forms: await card.locator('form.resolve').count(),
    errors: await card.locator('.error').evaluateAll((es) =>
      es.map((e) => ({ code: e.getAttribute('data-code'), text: e.textContent.trim() })),
    ),
  };
}

/** Waits until the card of `id` has `data-status=status`; on timeout, says what it has. */
async function waitStatus(page, id, status, timeout = LIVE_MS) {
  const selector = `${cardSelector(id)}[data-status="${status}"]`;
  try {
    await page.waitForSelector(selector, { timeout, state: 'attached' });
  } catch (error) {
    const card = page.locator(cardSelector(id));
    const seen = (await card.count()) > 0 ? await cardState(card) : 'the card is gone';
    throw new Error(`the card never became ${status} within ${timeout} ms; it shows ${JSON.stringify(seen)}`, {
      cause: error,
    });
  }
}

/**
 * Waits until the text of `selector` is no longer `before` (the countdown ticks once a second,
 * but a busy machine may delay a tick); returns the new text.
 */
async function waitTextChange(page, selector, before, timeout = LIVE_MS) {
  try {
    const changed = await page.waitForFunction(
      ({ selector, before }) => {
        const text = document.querySelector(selector)?.textContent.trim() ?? '';
        return text !== '' && text !== before ? text : null;
      },
      { selector, before },
      { timeout },
    );
    return await changed.jsonValue();
  } catch (error) {
    const now = await page.locator(selector).textContent().catch(() => null);
    throw new Error(`${selector} still showed ${JSON.stringify(now)} (was ${JSON.stringify(before)}) after ${timeout} ms`, {
      cause: error,
    });
  }
}

/** The refusals shown in a list's box (`#publications-box`, `#asks-box`). */
async function boxErrors(page, box) {
  return page
    .locator(`#${box} .error`)
    .evaluateAll((es) => es.map((e) => ({ code: e.getAttribute('data-code'), text: e.textContent.trim() })));
}

/**
 * Answers one item of a list (a publication or an ask) with the mouse: clicks its button
 * `name=value`, waits for the server's answer to the form's POST, then until the item has left
 * the list. Returns the POST's status and what the box shows after.
 */
async function answerListItem(page, { selector, box, name, value }) {
  const item = page.locator(selector);
  await item.waitFor({ state: 'visible' });
  const action = await item.locator('form.answer').getAttribute('action');
  const posted = page.waitForResponse(
    (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === action,
  );
  posted.catch(() => {});
  await item.locator(`button[name=${name}][value=${value}]`).click();
  const response = await posted;
  const errors = await boxErrors(page, box);
  try {
    await item.waitFor({ state: 'detached', timeout: LIVE_MS });
  } catch (error) {
    throw new Error(
      `${selector} stayed in #${box} after POST ${action} -> ${response.status()}; errors: ${JSON.stringify(errors)}`,
      { cause: error },
    );
  }
  return { action, status: response.status(), errors, left: await page.locator(selector).count() };
}

/** A publication's row as shown: status, path, revision, digest, its buttons. */
async function publicationState(page, id) {
  return page.locator(publicationSelector(id)).evaluate((a) => ({
    status: a.getAttribute('data-status'),
    path: a.querySelector('code.path')?.textContent ?? null,
    revision: a.querySelector('.revision')?.textContent ?? null,
    sha256: a.querySelector('code.sha256')?.textContent ?? null,
    buttons: [...a.querySelectorAll('form.answer button')].map((b) => `${b.name}=${b.value}`),
  }));
}

/** An ask as shown: its tool, reason, the exact input text, its buttons. */
async function askState(page, id) {
  return page.locator(askSelector(id)).evaluate((a) => ({
    tool: a.querySelector('code.tool')?.textContent ?? null,
    reason: a.querySelector('.reason')?.textContent ?? null,
    input: a.querySelector('pre.input')?.textContent ?? null,
    buttons: [...a.querySelectorAll('form.answer button')].map((b) => `${b.name}=${b.value}`),
  }));
}

/** The pending card of the input's approval, once it is there. */
async function pendingCard(page, input) {
  const card = page.locator(cardSelector(input.approvalId));
  await card.waitFor({ state: 'visible' });
  return card;
}

/**
 * Logs in and waits for the page's first live refresh (on the SSE stream's open it fetches
 * /cards, /sessions, /publications, then /asks), so that no refresh replaces the session list
 * under the scenario's hands afterwards.
 */
async function loginLive(page, login) {
  const refreshed = page.waitForResponse((r) => new URL(r.url()).pathname === '/asks');
  refreshed.catch(() => {});
  await login();
  await refreshed;
}

/** A session's row: its mode, whether it is idle, its forms and the shell select, its errors. */
async function sessionState(row) {
  return row.evaluate((li) => {
    const shell = li.querySelector('form.set-shell select[name=shell]');
    const mode = li.querySelector('form.set-mode select[name=mode]');
    const preset = li.querySelector('form.set-preset select[name=preset]');
    const options = (select) =>
      select
        ? [...select.options].map((o) => ({ value: o.value, selected: o.selected, selectedAttr: o.hasAttribute('selected') }))
        : null;
    return {
      idle: li.getAttribute('data-idle'),
      mode: li.querySelector('.mode')?.getAttribute('data-mode') ?? null,
      modeText: li.querySelector('.mode')?.textContent.trim() ?? null,
      modeForms: li.querySelectorAll('form.set-mode').length,
      shellForms: li.querySelectorAll('form.set-shell').length,
      modeValue: mode ? mode.value : null,
      modeOptions: options(mode),
      shellValue: shell ? shell.value : null,
      shellOptions: options(shell),
      presetValue: preset ? preset.value : null,
      presetOptions: options(preset),
      errors: [...li.querySelectorAll('.error')].map((e) => ({ code: e.getAttribute('data-code'), text: e.textContent.trim() })),
    };
  });
}

/** Waits until the session's row has `selector` inside; on timeout, says what it shows. */
async function waitSession(page, id, selector, what, timeout = LIVE_MS) {
  try {
    await page.waitForSelector(`${sessionSelector(id)} ${selector}`, { timeout, state: 'attached' });
  } catch (error) {
    const row = page.locator(sessionSelector(id));
    const seen = (await row.count()) > 0 ? await sessionState(row) : 'the session is gone';
    throw new Error(`the session never ${what} (${selector}) within ${timeout} ms; it shows ${JSON.stringify(seen)}`, {
      cause: error,
    });
  }
}

/** The session's row, once it is there. */
async function sessionRow(page, id) {
  const row = page.locator(sessionSelector(id));
  await row.waitFor({ state: 'visible' });
  return row;
}

/** Approve or reject through the form with the mouse. */
async function answerWithMouse({ page, input, login, screenshot }, action) {
  await login();
  const card = await pendingCard(page, input);
  const before = await cardState(card);
  const shots = [];
  if (action === 'approve') shots.push(await screenshot(card, 'card-pending.png'));
  if (input.mode) await card.locator('select[name=mode]').selectOption(input.mode);
  await card.locator(`button[name=action][value=${action}]`).click();
  const status = action === 'approve' ? 'approved' : 'rejected';
  await waitStatus(page, input.approvalId, status);
  const after = await cardState(card);
  if (action === 'approve') shots.push(await screenshot(card, 'card-approved.png'));
  return { before, after, screenshots: shots.filter(Boolean) };
}

/** The accessible name of every control of a card's form, and the mode options. */
async function controlNames(card) {
  const controls = await card.locator('form.resolve').evaluate((form) =>
    [...form.querySelectorAll('select, button, input:not([type=hidden]), textarea')].map((c) => {
      const byIds = (c.getAttribute('aria-labelledby') || '')
        .split(/\s+/)
        .filter(Boolean)
        .map((id) => document.getElementById(id)?.textContent || '')
        .join(' ');
      const labels = [...(c.labels || [])].map((l) => l.textContent).join(' ');
      const own = c.tagName === 'BUTTON' ? c.textContent : '';
      const name = [c.getAttribute('aria-label') || '', byIds, labels, own, c.getAttribute('title') || '']
        .join(' ')
        .trim();
      return { tag: c.tagName.toLowerCase(), name: c.getAttribute('name'), accessibleName: name };
    }),
  );
  const modes = await card
    .locator('select[name=mode] option')
    .evaluateAll((os) => os.map((o) => ({ value: o.value, selected: o.selected })));
  return { controls, modes };
}

const scenarios = {
  async approve_with_mode(ctx) {
    return answerWithMouse(ctx, 'approve');
  },

  async reject(ctx) {
    return answerWithMouse(ctx, 'reject');
  },

  /**
   * A pending card comes back after a reload with its deadline; the CLI's answer then reaches the
   * open page without a reload, and so does a new plan; after a reload the answered card is gone
   * and the new one is there.
   */
  async reload_then_answered_elsewhere({ page, input, login }) {
    await login();
    let card = await pendingCard(page, input);
    const deadline = await card.locator('time.deadline').getAttribute('datetime');
    const countdown1 = (await card.locator('.countdown').innerText()).trim();
    const countdown2 = await waitTextChange(page, `${cardSelector(input.approvalId)} .countdown`, countdown1);

    await page.reload();
    card = await pendingCard(page, input);
    const deadlineAfterReload = await card.locator('time.deadline').getAttribute('datetime');
    const statusAfterReload = await card.getAttribute('data-status');

    // A mark that a reload or navigation would wipe.
    await page.evaluate(() => {
      window.__planhostNoReload = true;
    });
    await checkpoint('pending-seen', { deadline, deadlineAfterReload });
    // The Rust side answered from the CLI: the open page must show it by itself.
    await waitStatus(page, input.approvalId, 'approved');
    const live = await cardState(card);
    const { newApprovalId } = await checkpoint('answered-live');
    // A plan submitted now appears by itself.
    await waitStatus(page, newApprovalId, 'pending');
    const sameDocument = await page.evaluate(() => window.__planhostNoReload === true);

    await page.reload();
    await page.locator('#cards').waitFor({ state: 'attached' });
    await page.locator(cardSelector(newApprovalId)).waitFor({ state: 'visible' });
    const cardsAfterReload = await page.locator(cardSelector(input.approvalId)).count();
    const newCardsAfterReload = await page.locator(cardSelector(newApprovalId)).count();
    return {
      newCardsAfterReload,
      deadline,
      deadlineAfterReload,
      statusAfterReload,
      countdown1,
      countdown2,
      live,
      sameDocument,
      cardsAfterReload,
    };
  },

  /**
   * The approval's deadline passes while the page is open (the Rust side moves the host's test
   * clock at the checkpoint): the card turns expired by itself, with the code, without a reload.
   */
  async expiry_seen_live({ page, input, login, screenshot }) {
    await login();
    const card = await pendingCard(page, input);
    const before = await cardState(card);
    // A mark that a reload or navigation would wipe.
    await page.evaluate(() => {
      window.__planhostNoReload = true;
    });
    await checkpoint('pending-seen');
    await waitStatus(page, input.approvalId, 'expired');
    const live = await cardState(card);
    const sameDocument = await page.evaluate(() => window.__planhostNoReload === true);
    const shots = [await screenshot(card, 'card-expired.png')].filter(Boolean);
    return { before, live, sameDocument, screenshots: shots };
  },

  /** Choosing a preset (Plan's rules) in the session's form sets it on the session. */
  async preset_change({ page, input, login, screenshot }) {
    await loginLive(page, login);
    const row = await sessionRow(page, input.sessionId);
    const before = await sessionState(row);
    const form = row.locator('form.set-preset');
    await form.locator('select[name=preset]').selectOption(input.preset);
    await form.locator('button[type=submit]').click();
    await waitSession(page, input.sessionId, `form.set-preset select[name=preset] option[value="${input.preset}"][selected]`, 'showed the preset chosen');
    const after = await sessionState(row);
    const shots = [await screenshot(row, 'session-preset.png')].filter(Boolean);
    return { before, after, screenshots: shots };
  },

  /** The shell catalog is shown; choosing bash in the session's form pins it. */
  async shell_change({ page, input, login }) {
    await loginLive(page, login);
    const row = await sessionRow(page, input.sessionId);
    const before = await sessionState(row);
    const catalog = await page.evaluate(() => ({
      rows: [...document.querySelectorAll('#shells tr[data-shell-id]')].map((r) => ({
        id: r.getAttribute('data-shell-id'),
        available: r.getAttribute('data-available'),
      })),
      effective: [...document.querySelectorAll('p.effective[data-fallback]')].map((p) => ({
        id: p.getAttribute('data-shell-id'),
        fallback: p.getAttribute('data-fallback'),
      })),
    }));
    const bashAvailable = await page.locator('#shells tr[data-shell-id=bash][data-available=true]').count();
    const form = row.locator('form.set-shell');
    await form.locator('select[name=shell]').selectOption(input.shell);
    await form.locator('button[type=submit]').click();
    // The server's answer replaces the list: only then is `selected` an attribute (choosing sets
    // the property alone).
    await waitSession(page, input.sessionId, `form.set-shell select[name=shell] option[value="${input.shell}"][selected]`, 'showed the shell chosen');
    const after = await sessionState(row);
    return { before, catalog, bashAvailable, after };
  },

  /**
   * A shell the page does not offer (a Windows one) forced into the select and submitted: the
   * session's row shows the host's refusal.
   */
  async refused_shell({ page, input, login }) {
    await loginLive(page, login);
    const row = await sessionRow(page, input.sessionId);
    const before = await sessionState(row);
    await page.evaluate(
      ({ selector, shell }) => {
        const select = document.querySelector(`${selector} form.set-shell select[name=shell]`);
        const option = document.createElement('option');
        option.value = shell;
        option.textContent = shell;
        select.append(option);
        select.value = shell;
      },
      { selector: sessionSelector(input.sessionId), shell: input.shell },
    );
    const forced = await row.locator('form.set-shell select[name=shell]').inputValue();
    await row.locator('form.set-shell button[type=submit]').click();
    await waitSession(page, input.sessionId, '.error[data-code]', 'showed a refusal');
    const after = await sessionState(row);
    return { before, forced, after };
  },

  /** The Agent | Plan selector: an idle session switched to Plan; a busy one offers none. */
  async mode_selector({ page, input, login }) {
    await loginLive(page, login);
    const idle = await sessionRow(page, input.idleSessionId);
    const busy = await sessionRow(page, input.busySessionId);
    const before = { idle: await sessionState(idle), busy: await sessionState(busy) };
    const form = idle.locator('form.set-mode');
    await form.locator('select[name=mode]').selectOption('plan');
    await form.locator('button[type=submit]').click();
    await waitSession(page, input.idleSessionId, '.mode[data-mode="plan"]', 'showed Plan');
    const after = { idle: await sessionState(idle), busy: await sessionState(busy) };
    return { before, after };
  },

  /** Tab to the mode select, choose with the arrow keys, Tab to Approve, Enter. */
  async keyboard_only_approval({ page, input, login }) {
    await login();
    const labels = await controlNames(await pendingCard(page, input));
    const focused = () =>
      page.evaluate((id) => {
        const a = document.activeElement;
        if (!a || a === document.body) return null;
        const card = a.closest('article.card');
        const style = getComputedStyle(a);
        return {
          tag: a.tagName.toLowerCase(),
          name: a.getAttribute('name'),
          value: a.value ?? null,
          inCard: !!card && card.getAttribute('data-approval-id') === id,
          focusVisible: a.matches(':focus-visible'),
          outline: `${style.outlineStyle} ${style.outlineWidth}`,
          boxShadow: style.boxShadow,
        };
      }, input.approvalId);

    const path = [];
    let onSelect = null;
    for (let i = 0; i < 60 && !onSelect; i += 1) {
      await page.keyboard.press('Tab');
      const f = await focused();
      path.push(f ? `${f.tag}${f.name ? `[name=${f.name}]` : ''}` : 'body');
      if (f && f.inCard && f.tag === 'select' && f.name === 'mode') onSelect = f;
    }
    if (!onSelect) throw new Error(`Tab never reached the card's mode select; focus went ${path.join(' > ')}`);

    // ask (the default) → accept-edits.
    await page.keyboard.press('ArrowDown');
    const chosen = await focused();
    await page.keyboard.press('Tab');
    const onApprove = await focused();
    await page.keyboard.press('Enter');
    await waitStatus(page, input.approvalId, 'approved');
    const after = await cardState(page.locator(cardSelector(input.approvalId)));
    return { labels, path, onSelect, chosen, onApprove, after };
  },

  /** zh-CN from Accept-Language, then the switch back to English. */
  async chinese_locale({ page, input, login, screenshot }) {
    await login();
    const card = await pendingCard(page, input);
    const zh = {
      lang: await page.evaluate(() => document.documentElement.lang),
      approve: (await card.locator('button[name=action][value=approve]').innerText()).trim(),
      reject: (await card.locator('button[name=action][value=reject]').innerText()).trim(),
    };
    const shots = [await screenshot(card, 'card-zh.png')].filter(Boolean);
    const toEnglish = page.locator('a.lang-switch[href*="lang=en"]');
    const switches = await toEnglish.count();
    let en = null;
    if (switches > 0) {
      await Promise.all([page.waitForURL((u) => u.pathname === '/', { timeout: WAIT_MS }), toEnglish.first().click()]);
      await page.waitForLoadState('load');
      const enCard = await pendingCard(page, input);
      en = {
        lang: await page.evaluate(() => document.documentElement.lang),
        approve: (await enCard.locator('button[name=action][value=approve]').innerText()).trim(),
      };
    }
    return { zh, en, switches, screenshots: shots };
  },

  /**
   * A session's unfinished tool calls and its last execution, live in the open page: a Read
   * allowed, then finished while a Bash runs, then the turn over and an execution completed.
   */
  async session_activity({ page, input, login, screenshot }) {
    await loginLive(page, login);
    const row = sessionSelector(input.sessionId);
    const calls = () =>
      page.locator(`${row} li.tool-call`).evaluateAll((items) =>
        items.map((li) => ({
          id: li.dataset.toolCallId,
          state: li.dataset.state,
          name: li.querySelector('code')?.textContent ?? null,
          stateText: li.querySelector('.tool-state')?.textContent ?? null,
          since: li.querySelector('time')?.getAttribute('datetime') ?? null,
          elapsed: li.querySelector('.elapsed')?.textContent ?? null,
        })),
      );
    await page.evaluate(() => {
      window.__planhostNoReload = true;
    });
    const none = (await page.locator(`${row} dd.tools`).innerText()).trim();
    // From here on every event names this session: the page refetches its item, not the list.
    const fetched = { list: 0, item: 0 };
    page.on('request', (req) => {
      const path = new URL(req.url()).pathname;
      if (path === '/sessions') fetched.list += 1;
      if (path === `/sessions/${input.sessionId}`) fetched.item += 1;
    });
    await checkpoint('open', { none, before: await calls() });
    await waitSession(page, input.sessionId, 'li.tool-call[data-tool-call-id="read-1"][data-state="allowed"]', 'showed read-1 allowed');
    const allowed = await calls();
    await checkpoint('allowed', { allowed });
    await waitSession(page, input.sessionId, 'li.tool-call[data-tool-call-id="bash-1"][data-state="running"]', 'showed bash-1 running');
    // The clock of a running call ticks within a second.
    await page.waitForFunction(
      (row) => /^\(\d+:\d\d\)$/.test(document.querySelector(`${row} li.tool-call[data-state="running"] .elapsed`)?.textContent ?? ''),
      row,
      { timeout: WAIT_MS },
    );
    const running = await calls();
    const permissionMode = await page.locator(`${row} dd.permission-mode`).evaluate((d) => ({ value: d.dataset.permissionMode, text: d.textContent.trim() }));
    await screenshot(page.locator(row), 'session-running.png');
    await checkpoint('running', { running, permissionMode });
    await waitSession(page, input.sessionId, 'dd.last-execution[data-state="completed"]', 'showed the completed execution');
    const last = page.locator(`${row} dd.last-execution`);
    return {
      none,
      allowed,
      running,
      last: {
        executionId: await last.getAttribute('data-execution-id'),
        text: (await last.innerText()).trim(),
        ended: await last.locator('time').getAttribute('datetime'),
      },
      toolsAfter: await page.locator(`${row} dd.tools`).count(),
      fetched,
      sameDocument: await page.evaluate(() => window.__planhostNoReload === true),
    };
  },

  /**
   * A plan whose draft the person was shown before (pi's /plan preview): its card shows what
   * changed since that draft, and the diff from the previous plan folded beneath.
   */
  async diff_since_seen_draft({ page, input, login, screenshot }) {
    await login();
    const card = await pendingCard(page, input);
    await screenshot(card, 'card-diff-seen.png');
    const lines = (diff, selector) => diff.locator(selector).evaluateAll((es) => es.map((e) => e.textContent));
    const seen = card.locator('section.diff[data-base="seen"]');
    const previous = card.locator('details.diff[data-base="previous"]');
    return {
      open: await card.locator('section.diff').count(),
      seen: {
        count: await seen.count(),
        label: (await seen.locator('h4').innerText()).trim(),
        inserted: await lines(seen, 'ins'),
        deleted: await lines(seen, 'del'),
      },
      previous: {
        count: await previous.count(),
        open: await previous.evaluate((d) => d.open),
        label: (await previous.locator('summary').innerText()).trim(),
        inserted: await lines(previous, 'ins'),
      },
    };
  },

  /**
   * The page's cookie stays with planhost.localhost: another server the person opens on
   * 127.0.0.1 or localhost (any port) never receives it. The same name on another port does,
   * as cookies ignore ports, which shows the check sees the cookie when it is sent.
   */
  async cookie_stays_with_the_page({ page, login }) {
    await login();
    const seen = [];
    const server = http.createServer((req, res) => {
      // The loads themselves; the browser's own /favicon.ico requests do not count.
      if (req.url === '/') seen.push({ host: req.headers.host, cookie: req.headers.cookie ?? '' });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('other server');
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = server.address().port;
    try {
      for (const url of [`http://127.0.0.1:${port}/`, `http://localhost:${port}/`, `http://planhost.localhost:${port}/`]) {
        await page.goto(url);
      }
    } finally {
      server.close();
    }
    return { seen };
  },

  /** A second submission's card shows what changed since the first plan. */
  async diff_since_last_plan({ page, input, login }) {
    await login();
    const card = await pendingCard(page, input);
    const diff = card.locator('section.diff');
    const texts = (selector) => diff.locator(selector).evaluateAll((es) => es.map((e) => e.textContent));
    return {
      diffs: await diff.count(),
      inserted: await texts('ins'),
      deleted: await texts('del'),
      firstCards: await page.locator(cardSelector(input.firstApprovalId)).count(),
    };
  },

  /** Two pending publications (`/plan save`): the first approved, the second rejected. */
  async answer_publications({ page, input, login }) {
    await loginLive(page, login);
    await page.locator(publicationSelector(input.rejectId)).waitFor({ state: 'visible' });
    const before = {
      approved: await publicationState(page, input.approveId),
      rejected: await publicationState(page, input.rejectId),
    };
    const box = 'publications-box';
    const approve = await answerListItem(page, {
      selector: publicationSelector(input.approveId),
      box,
      name: 'action',
      value: 'approve',
    });
    const rejectStillShown = await page.locator(publicationSelector(input.rejectId)).count();
    const reject = await answerListItem(page, {
      selector: publicationSelector(input.rejectId),
      box,
      name: 'action',
      value: 'reject',
    });
    const empty = await page.locator(`#${box} p.empty`).count();
    return { before, approve, rejectStillShown, reject, empty };
  },

  /** Two open permission asks with their exact input: the first allowed, the second denied. */
  async answer_asks({ page, input, login }) {
    await loginLive(page, login);
    await page.locator(askSelector(input.denyId)).waitFor({ state: 'visible' });
    const before = {
      allowed: await askState(page, input.allowId),
      denied: await askState(page, input.denyId),
    };
    const box = 'asks-box';
    const allow = await answerListItem(page, {
      selector: askSelector(input.allowId),
      box,
      name: 'decision',
      value: 'allow',
    });
    const denyStillShown = await page.locator(askSelector(input.denyId)).count();
    const deny = await answerListItem(page, {
      selector: askSelector(input.denyId),
      box,
      name: 'decision',
      value: 'deny',
    });
    const empty = await page.locator(`#${box} p.empty`).count();
    return { before, allow, denyStillShown, deny, empty };
  },

  /**
   * JavaScript off: the form itself posts (with the mode chosen), the server answers 303 to `/`,
   * and the reloaded page no longer lists the card. What the browser sent as `Origin` is reported:
   * with `Referrer-Policy: no-referrer` it was `null` and the server refused the answer.
   */
  async approve_without_javascript({ input, newPage }) {
    const { page, login } = await newPage({ javaScriptEnabled: false });
    await login();
    const card = await pendingCard(page, input);
    const before = await cardState(card);
    // app.js would mark the live stream and fill the countdown: neither ran.
    const script = {
      live: await page.locator('#live').getAttribute('data-state'),
      countdown: (await card.locator('.countdown').textContent()).trim(),
    };
    await card.locator('select[name=mode]').selectOption(input.mode);
    const path = `/approvals/${input.approvalId}`;
    const posted = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === path);
    posted.catch(() => {});
    const followed = page.waitForResponse((r) => {
      const request = r.request();
      return (
        request.method() === 'GET' && new URL(r.url()).pathname === '/' && request.redirectedFrom()?.method() === 'POST'
      );
    });
    followed.catch(() => {});
    await card.locator('button[name=action][value=approve]').click();
    const post = await posted;
    const sent = await post.request().allHeaders();
    const form = new URLSearchParams(post.request().postData() || '');
    const landed = await followed;
    await page.locator(cardSelector(input.approvalId)).waitFor({ state: 'detached' });
    await page.locator('#cards').waitFor({ state: 'attached' });
    return {
      before,
      script,
      post: {
        status: post.status(),
        location: post.headers().location ?? null,
        origin: sent.origin ?? null,
        fields: { action: form.get('action'), mode: form.get('mode'), csrf: form.has('csrf') },
      },
      landed: { status: landed.status(), url: page.url() },
      cardsAfter: await page.locator(cardSelector(input.approvalId)).count(),
      emptyAfter: await page.locator('#cards p.empty').count(),
    };
  },

  /**
   * A phone's width (375 × 740): nothing makes the page scroll sideways, the card's Approve
   * button lies within the viewport's width, and a click on it approves.
   */
  async phone_width_approval({ input, newPage }) {
    const { page, login } = await newPage({ viewport: { width: 375, height: 740 } });
    await login();
    const card = await pendingCard(page, input);
    const approve = card.locator('button[name=action][value=approve]');
    const measure = () =>
      approve.evaluate((button) => {
        const width = window.innerWidth;
        const r = button.getBoundingClientRect();
        // What sticks out on the right, for the failure message.
        const wide = [...document.querySelectorAll('body *')]
          .filter((e) => e.getBoundingClientRect().right > width + 0.5)
          .slice(0, 10)
          .map((e) => `${e.tagName.toLowerCase()}${e.className ? `.${String(e.className).split(' ').join('.')}` : ''} right=${Math.round(e.getBoundingClientRect().right)}`);
        return {
          innerWidth: width,
          scrollWidth: document.documentElement.scrollWidth,
          scrollX: window.scrollX,
          button: { left: r.left, right: r.right, width: r.width, height: r.height },
          wide,
        };
      });
    const before = await measure();
    await approve.scrollIntoViewIfNeeded();
    const atButton = { ...(await measure()), visible: await approve.isVisible() };
    await approve.click();
    await waitStatus(page, input.approvalId, 'approved');
    const after = await cardState(card);
    return { before, atButton, after, scrollXAfter: await page.evaluate(() => window.scrollX) };
  },

  /**
   * Version 2 of the page, as a person meets it (desktop or phone, English or Chinese): the
   * title counts what waits; every card says whose it is; a revision leads with its summary
   * and numbered hunks; a plan file changed on disk withholds Approve; nothing overflows at
   * phone width; targets are 44 px; colours pass AA in light and dark; the answer keeps focus
   * on its card and folds it; an answer given elsewhere moves below what still waits; a link
   * opens one approval; a rotated token and a stopped host are said, not swallowed.
   */
  async overview_v2({ input, newPage, screenshot }) {
    const phone = Boolean(input.phone);
    const { page, login } = await newPage({ viewport: phone ? { width: 390, height: 844 } : { width: 1280, height: 900 } });
    await login();
    const { a, b, c } = input;
    for (const id of [a, b, c]) await page.locator(cardSelector(id)).waitFor({ state: 'visible' });
    await page.locator(askSelector(input.ask)).waitFor({ state: 'visible' });
    const titleBefore = await page.title();
    // Why the ask asks: in the page's language, then the host's sentence (English) as detail.
    const askReason = await page.locator(`${askSelector(input.ask)} .reason`).evaluate((r) => ({
      text: r.textContent.replace(/\s+/g, ' ').trim(),
      detail: r.querySelector('.detail')?.textContent.trim() ?? null,
      detailLang: r.querySelector('.detail')?.getAttribute('lang') ?? null,
      rule: r.closest('article.ask')?.dataset.rule,
      whose: r.closest('article.ask')?.querySelector('p.context')?.textContent.replace(/\s+/g, ' ').trim(),
    }));
    const order = () => page.locator('article.card').evaluateAll((cs) => cs.map((c) => ({ id: c.dataset.approvalId, status: c.dataset.status })));
    const context = async (id) =>
      page.locator(`${cardSelector(id)} p.context`).evaluate((p) => ({
        text: p.textContent.replace(/\s+/g, ' ').trim(),
        workspace: p.querySelector('code.workspace')?.textContent,
        agent: p.querySelector('.agent')?.textContent,
        version: p.querySelector('.submission')?.dataset.n,
        link: p.querySelector('a.permalink')?.getAttribute('href'),
      }));
    const diffOf = (id) =>
      page.locator(cardSelector(id)).evaluate((card) => {
        const summary = card.querySelector('.diff-summary');
        return {
          status: summary?.dataset.status,
          summary: summary?.textContent.trim(),
          numbered: card.querySelectorAll('.diff .ln').length,
          firstNumbers: card.querySelector('.diff ins .ln, .diff del .ln')?.textContent.trim(),
          planOpen: card.querySelector('details.plan')?.open,
          diffBeforePlan:
            !!summary && !!card.querySelector('details.plan') &&
            Boolean(summary.compareDocumentPosition(card.querySelector('details.plan')) & Node.DOCUMENT_POSITION_FOLLOWING),
        };
      });
    const contexts = { a: await context(a), b: await context(b), c: await context(c) };
    const diffs = { a: await diffOf(a), b: await diffOf(b) };
    const changedFile = await page.locator(cardSelector(c)).evaluate((card) => ({
      warning: card.querySelector('p.warning')?.dataset.code,
      warningText: card.querySelector('p.warning')?.textContent.trim(),
      approve: card.querySelectorAll('button.approve').length,
      reject: card.querySelectorAll('button.reject').length,
    }));
    const overflow = await page.evaluate(() => {
      const width = window.innerWidth;
      return {
        innerWidth: width,
        scrollWidth: document.documentElement.scrollWidth,
        wide: [...document.querySelectorAll('body *')]
          .filter((e) => e.getBoundingClientRect().right > width + 0.5)
          .slice(0, 8)
          .map((e) => `${e.tagName.toLowerCase()}.${String(e.className)} right=${Math.round(e.getBoundingClientRect().right)}`),
      };
    });
    const targets = await page.evaluate(() =>
      [...document.querySelectorAll('main button, main select, main summary, main a.permalink, main a.artifact')]
        .filter((e) => e.getClientRects().length > 0)
        .map((e) => ({ what: `${e.tagName.toLowerCase()}.${e.className}`, height: e.getBoundingClientRect().height }))
        .filter((t) => t.height < 43.5),
    );
    // Contrast of the page's text colours against its background, as rendered.
    const contrast = async (scheme) => {
      await page.emulateMedia({ colorScheme: scheme });
      return page.evaluate(() => {
        const rgb = (s) => (s.match(/[\d.]+/g) || []).map(Number);
        const lum = ([r, g, b]) => {
          const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
          return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
        };
        const background = (el) => {
          for (let e = el; e; e = e.parentElement) {
            const c = rgb(getComputedStyle(e).backgroundColor);
            if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c;
          }
          return rgb(getComputedStyle(document.documentElement).backgroundColor);
        };
        const ratio = (el) => {
          const [l1, l2] = [lum(rgb(getComputedStyle(el).color)), lum(background(el))].sort((x, y) => y - x);
          return (l1 + 0.05) / (l2 + 0.05);
        };
        const out = {};
        for (const sel of ['body', '.label', '.error, .warning', 'button.reject', 'button.approve', '.diff ins', '.diff del', '.diff .ln', '#live', 'a.permalink', '.modes-help']) {
          const els = [...document.querySelectorAll(sel)].filter((e) => e.getClientRects().length > 0);
          if (els.length) out[sel] = Math.min(...els.map(ratio));
        }
        return out;
      });
    };
    const light = await contrast('light');
    const dark = await contrast('dark');
    const shots = [];
    shots.push(await screenshot(page, `v2-${phone ? 'phone' : 'desktop'}-${input.locale || 'en'}-dark.png`));
    await page.emulateMedia({ colorScheme: 'light' });
    shots.push(await screenshot(page, `v2-${phone ? 'phone' : 'desktop'}-${input.locale || 'en'}.png`));

    // The diagnostics panel, loaded when opened.
    await page.locator('#diagnostics > summary').click();
    await page.locator('#diagnostics-box table.checks tr').first().waitFor({ state: 'attached' });
    const diagnostics = await page.locator('#diagnostics-box').evaluate((box) => ({
      version: box.querySelector('dd.version')?.textContent.trim(),
      stateDir: box.querySelector('code.state-dir')?.textContent,
      socket: box.querySelector('code.socket')?.textContent,
      uptime: box.querySelector('dd.uptime')?.textContent.trim(),
      checks: [...box.querySelectorAll('table.checks tr')].map((r) => ({ name: r.dataset.check, ok: r.dataset.ok })),
      auditRows: box.querySelectorAll('table.audit tr').length,
    }));
    shots.push(await screenshot(page.locator(askSelector(input.ask)), `v2-ask-${phone ? 'phone' : 'desktop'}-${input.locale || 'en'}.png`));
    shots.push(await screenshot(page.locator('#diagnostics'), `v2-diagnostics-${phone ? 'phone' : 'desktop'}.png`));
    await page.locator('#diagnostics > summary').click();

    // On a phone the answer stays at hand while the plan is read.
    let sticky = null;
    if (phone) {
      const cardA = page.locator(cardSelector(a));
      await cardA.locator('details.plan > summary').click();
      const rendered = cardA.locator('details.plan .rendered');
      await rendered.evaluate((r) => r.scrollIntoView({ block: 'center' }));
      sticky = await cardA.locator('form.resolve').evaluate((f) => {
        const r = f.getBoundingClientRect();
        return { top: r.top, bottom: r.bottom, innerHeight: window.innerHeight };
      });
    }

    // Approve A with the mouse: focus stays on its card, which folds; the count drops.
    const cardA = page.locator(cardSelector(a));
    shots.push(await screenshot(cardA, `v2-card-revision-${phone ? 'phone' : 'desktop'}.png`));
    const posted = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/approvals/${a}`);
    await cardA.locator('button.approve').click();
    await posted;
    await waitStatus(page, a, 'approved');
    const afterAnswer = await page.evaluate((id) => ({
      focused: document.activeElement?.dataset?.approvalId === id,
      activeTag: document.activeElement?.tagName,
      folded: document.querySelector(`article.card[data-approval-id="${id}"] details.answered`)?.open === false,
      title: document.title,
    }), a);
    shots.push(await screenshot(cardA, `v2-card-answered-${phone ? 'phone' : 'desktop'}.png`));

    // Answered elsewhere (the CLI rejects B with a note): it moves below what still waits.
    await checkpoint('answered-here');
    await waitStatus(page, b, 'rejected');
    const rejectedText = (await page.locator(`${cardSelector(b)} .status-text`).innerText()).trim();
    const orderAfter = await order();

    // A link to one approval.
    await page.goto(new URL(`/approvals/${a}`, page.url()).toString());
    await page.locator(cardSelector(a)).waitFor({ state: 'visible' });
    const linked = await page.evaluate(() => ({
      first: document.querySelector('article.card')?.dataset.approvalId,
      focused: document.activeElement?.dataset?.approvalId,
      status: document.querySelector('article.card')?.dataset.status,
    }));

    // The token is rotated: the page says its access ended, and an answer says so too.
    await checkpoint('rotate');
    let revoked = null;
    try {
      await page.waitForSelector('#live[data-state="revoked"]', { timeout: 15000 });
      revoked = (await page.locator('#live').innerText()).trim();
    } catch (error) {
      revoked = `never: ${(await page.locator('#live').innerText()).trim()}`;
    }
    const cardC = page.locator(cardSelector(c));
    await cardC.locator('button.reject').click();
    const unauthorized = await cardC.locator('.error.client').evaluate((e) => ({
      code: e.dataset.code,
      text: e.textContent.trim(),
      codeElements: e.querySelectorAll('code').length,
      focused: document.activeElement === e,
    }));

    // The host stops: an answer says planhost is not running.
    await checkpoint('down');
    await cardC.locator('button.reject').click();
    await page.waitForSelector(`${cardSelector(c)} .error.client[data-code="HOST_UNREACHABLE"]`, { timeout: WAIT_MS });
    const offline = await cardC.locator('.error.client').evaluate((e) => ({ code: e.dataset.code, text: e.textContent.trim(), focused: document.activeElement === e }));
    shots.push(await screenshot(cardC, `v2-card-host-down-${phone ? 'phone' : 'desktop'}.png`));

    return {
      titleBefore,
      askReason,
      diagnostics,
      contexts,
      diffs,
      changedFile,
      overflow,
      targets,
      light,
      dark,
      sticky,
      afterAnswer,
      rejectedText,
      orderAfter,
      linked,
      revoked,
      unauthorized,
      offline,
      screenshots: shots.filter(Boolean),
    };
  },

  /**
   * Browser notifications: the page offers them; once the person has allowed them, a plan that
   * starts waiting while the page is open is announced with its title, and a click on the
   * notification brings its card.
   */
  async notify_new_plan({ input, newPage }) {
    const { page, login, context } = await newPage({ permissions: ['notifications'] });
    await context.addInitScript(() => {
      window.__notes = [];
      const Real = window.Notification;
      class Recorded {
        constructor(title, options) {
          window.__notes.push({ title, body: options?.body ?? '', tag: options?.tag ?? '' });
          this.onclick = null;
          window.__lastNote = this;
        }
        static get permission() { return Real ? Real.permission : 'granted'; }
        static requestPermission() { return Real ? Real.requestPermission() : Promise.resolve('granted'); }
      }
      window.Notification = Recorded;
    });
    await login();
    await page.locator('#live[data-state="connected"]').waitFor({ state: 'attached' });
    const button = await page.locator('#notify-me').evaluate((b) => ({ hidden: b.hidden, disabled: b.disabled, text: b.textContent.trim(), on: b.dataset.on, blocked: b.dataset.blocked }));
    const permission = await page.evaluate(() => Notification.permission);
    const { approvalId } = await checkpoint('open');
    // A browser that denies notifications whatever the person allows (a headless shell): the
    // page must say they are blocked, and there is nothing more to see.
    if (permission !== 'granted') return { button, permission, notes: [], focused: null, approvalId };
    try {
      await page.waitForFunction(() => window.__notes.length > 0, null, { timeout: WAIT_MS });
    } catch (error) {
      const seen = await page.evaluate(() => ({ permission: Notification.permission, cards: document.querySelectorAll('article.card').length, live: document.getElementById('live').dataset.state }));
      throw new Error(`no notification within ${WAIT_MS} ms; the page had ${JSON.stringify(seen)}, the button ${JSON.stringify(button)}`, { cause: error });
    }
    const notes = await page.evaluate(() => window.__notes);
    await page.evaluate(() => window.__lastNote.onclick && window.__lastNote.onclick());
    const focused = await page.evaluate(() => document.activeElement?.dataset?.approvalId ?? null);
    return { button, permission, notes, focused, approvalId };
  },

  /**
   * The remote page on a phone: over TLS with a certificate the browser does not know (the
   * person accepts it once), the token sets a Secure cookie, and Approve works there.
   */
  async remote_phone({ input, newPage }) {
    const { page, context } = await newPage({ viewport: { width: 390, height: 844 }, ignoreHTTPSErrors: true });
    const response = await page.goto(`${input.remoteUrl}?token=${encodeURIComponent(input.token)}`);
    if (!response || response.status() !== 200) throw new Error(`the remote page answered ${response && response.status()}`);
    const landed = page.url();
    const cookies = await context.cookies(input.remoteUrl);
    const card = page.locator(cardSelector(input.approvalId));
    await card.waitFor({ state: 'visible' });
    await card.locator('button.approve').click();
    await waitStatus(page, input.approvalId, 'approved');
    return {
      landed,
      cookieSecure: cookies.length > 0 && cookies.every((c) => c.secure),
      status: await card.getAttribute('data-status'),
    };
  },

  /** A person stops a command the host runs: its Stop button ends it, and the row says so. */
  async stop_running({ page, input, login }) {
    await loginLive(page, login);
    const running = `${sessionSelector(input.sessionId)} li.tool-call[data-state="running"]`;
    await page.locator(`${running} form.stop button`).waitFor({ state: 'visible', timeout: WAIT_MS });
    const button = (await page.locator(`${running} form.stop button`).innerText()).trim();
    await page.locator(`${running} form.stop button`).click();
    await page.locator(running).waitFor({ state: 'detached', timeout: WAIT_MS });
    return { button };
  },

  /** A hostile plan renders inert. */
  async xss_plan_is_inert({ page, input, login }) {
    const dialogs = [];
    page.on('dialog', async (d) => {
      dialogs.push(d.message());
      await d.dismiss().catch(() => {});
    });
    await login();
    const card = await pendingCard(page, input);
    // Give a broken image's onerror (or anything else) time to run.
    await page.waitForTimeout(700);
    const rendered = card.locator('.rendered');
    const found = await rendered.evaluate((root) => {
      const all = [...root.querySelectorAll('*')];
      const urlAttrs = ['href', 'src', 'action', 'formaction', 'xlink:href', 'data'];
      return {
        scripts: root.querySelectorAll('script').length,
        javascriptUrls: all
          .flatMap((e) => urlAttrs.map((a) => e.getAttribute(a)).filter((v) => v !== null))
          .filter((v) => /^\s*javascript:/i.test(v)),
        handlers: all.flatMap((e) =>
          [...e.attributes].filter((a) => /^on/i.test(a.name)).map((a) => `${e.tagName}.${a.name}`),
        ),
        iframes: root.querySelectorAll('iframe, object, embed').length,
        html: root.innerHTML,
      };
    });
    const raw = await card.locator('details.raw pre').textContent();
    const pwned = await page.evaluate(() => (typeof window.pwned === 'undefined' ? null : String(window.pwned)));
    const links = await rendered.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    return { ...found, raw, pwned, dialogs, links };
  },
};

await run(scenarios);
