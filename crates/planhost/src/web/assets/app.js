// planhost web page: live updates (SSE), the countdown, and answering without a reload.
// Plain JavaScript, no build step. The server renders every string; this file has none.
"use strict";

(function () {
  const serverNow = Number(document.querySelector('meta[name="server-now"]').content);
  const skew = serverNow ? serverNow - Date.now() : 0;
  const live = document.getElementById("live");
  const cardsBox = document.getElementById("cards");

  function fragment(html) {
    const t = document.createElement("template");
    t.innerHTML = html;
    return t.content;
  }

  async function get(url) {
    const r = await fetch(url, { credentials: "same-origin", headers: { "x-planhost-fetch": "1" } });
    if (!r.ok) throw new Error(url + ": " + r.status);
    return r.text();
  }

  function pad(n) { return String(n).padStart(2, "0"); }

  // The absolute deadline in the reader's own time zone and language (the server sends UTC).
  function localTimes() {
    document.querySelectorAll("time.deadline:not([data-local]), time.local:not([data-local])").forEach((t) => {
      const at = new Date(t.getAttribute("datetime"));
      if (!isNaN(at)) {
        t.textContent = at.toLocaleString(document.documentElement.lang, { dateStyle: "medium", timeStyle: "medium" });
        t.dataset.local = "1";
      }
    });
  }

  function tick() {
    localTimes();
    const now = Date.now() + skew;
    let due = false;
    document.querySelectorAll('article.card[data-status="pending"]').forEach((card) => {
      const deadline = Date.parse(card.querySelector("time.deadline").getAttribute("datetime"));
      const left = Math.max(0, Math.floor((deadline - now) / 1000));
      const h = Math.floor(left / 3600), m = Math.floor((left % 3600) / 60), s = left % 60;
      card.querySelector(".countdown").textContent = (h ? h + ":" + pad(m) : String(m)) + ":" + pad(s);
      if (left === 0) due = true;
    });
    document.querySelectorAll('article.card:not([data-status="pending"]) .countdown').forEach((c) => {
      c.textContent = "";
    });
    // How long each running tool call has run.
    document.querySelectorAll('li.tool-call[data-state="running"] .elapsed').forEach((e) => {
      const s = Math.max(0, Math.floor((now - Number(e.dataset.since)) / 1000));
      const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
      e.textContent = "(" + (h ? h + ":" + pad(m) : String(m)) + ":" + pad(s % 60) + ")";
    });
    if (due) schedule(1000, ["cards", "sessions"]);
  }

  const titleBase = document.querySelector('meta[name="title-base"]').content;
  const titleCount = document.querySelector('meta[name="title-count"]').content;
  /** The tab's title counts what waits for an answer: plans, asks, publications. */
  function updateTitle() {
    const waiting =
      document.querySelectorAll('article.card[data-status="pending"]').length +
      document.querySelectorAll("article.ask").length +
      document.querySelectorAll('article.publication[data-status="pending"]').length;
    document.title = waiting ? titleCount.replace("{count}", String(waiting)) : titleBase;
  }

  /** Sets `el`'s text, each `…` span as <code> (a command to run). */
  function setText(el, text) {
    el.textContent = "";
    String(text).split("`").forEach((part, i) => {
      if (i % 2) {
        const code = document.createElement("code");
        code.textContent = part;
        el.append(code);
      } else {
        el.append(part);
      }
    });
  }

  /** A line saying what went wrong and what to do, with its code, from what the server put on
   * <body> (its words and the code registry's codes). */
  function problem(kind) {
    const p = document.createElement("p");
    p.className = "error";
    p.setAttribute("role", "alert");
    p.dataset.code = document.body.dataset["code" + kind] || kind;
    setText(p, document.body.dataset["err" + kind] || kind);
    return p;
  }

  /** Shows `line` in place of an earlier client-side error in `where`, and focuses it. */
  function showProblem(where, line) {
    where.querySelectorAll(".error.client").forEach((e) => e.remove());
    line.classList.add("client");
    line.setAttribute("tabindex", "-1");
    const form = where.querySelector("form") || where.firstChild;
    where.insertBefore(line, form);
    line.focus();
  }

  function showEmpty() {
    const hasCard = cardsBox.querySelector("article.card");
    let empty = cardsBox.querySelector("p.empty");
    if (hasCard && empty) empty.remove();
    if (!hasCard && !empty) {
      empty = document.createElement("p");
      empty.className = "empty";
      empty.textContent = cardsBox.dataset.empty;
      cardsBox.append(empty);
    }
  }

  /**
   * Puts the card as it is now in place of `old`. A card the person was working in keeps its
   * place and their focus; one answered elsewhere moves below the cards still waiting.
   */
  function replaceCard(old, html, hadFocus) {
    const fresh = fragment(html).querySelector("article.card");
    if (!fresh) return;
    const focused = hadFocus || old.contains(document.activeElement);
    old.replaceWith(fresh);
    if (focused) {
      fresh.focus();
    } else if (fresh.dataset.status !== "pending") {
      const waiting = cardsBox.querySelectorAll('article.card[data-status="pending"]');
      const last = waiting[waiting.length - 1];
      if (last && (last.compareDocumentPosition(fresh) & Node.DOCUMENT_POSITION_PRECEDING)) last.after(fresh);
    }
  }

  // What each kind of state change can alter on the page; "session" is the event's own session
  // (its one list item), which is all that anything else alters.
  const ALL = ["cards", "sessions", "publications", "asks"];
  const TOUCHES = {
    approvalChanged: ["cards", "session"],
    executionChanged: ["session"],
    publicationChanged: ["publications", "session"],
    permissionAsked: ["asks", "session"],
    permissionResolved: ["asks", "session"],
    turnEnded: ["asks", "session"],
  };
  /** The parts an event touches: "session" becomes "session:<id>", or the whole list. */
  function touched(data, names) {
    return names.map((p) => (p !== "session" ? p : data && data.sessionId ? "session:" + data.sessionId : "sessions"));
  }
  const parts = new Set();
  let pending = null;
  let running = Promise.resolve();
  function schedule(ms, what) {
    (what || ALL).forEach((p) => parts.add(p));
    if (pending) return;
    pending = setTimeout(() => {
      pending = null;
      // One refresh at a time, so a later answer never lands before an earlier one.
      running = running.then(() => {
        const now = new Set(parts);
        parts.clear();
        // What could not be fetched is tried again.
        return refresh(now).catch(() => {
          now.forEach((p) => parts.add(p));
          schedule(2000, []);
        });
      });
    }, ms);
  }

  // Browser notifications, after the person opts in: one per plan that starts waiting while
  // the page is open.
  const notifyButton = document.getElementById("notify-me");
  function notifyState() {
    if (!("Notification" in window)) return;
    notifyButton.hidden = false;
    if (Notification.permission === "granted") {
      notifyButton.textContent = notifyButton.dataset.on;
      notifyButton.disabled = true;
    } else if (Notification.permission === "denied") {
      notifyButton.textContent = notifyButton.dataset.blocked;
      notifyButton.disabled = true;
    }
  }
  notifyButton.addEventListener("click", async () => {
    try { await Notification.requestPermission(); } catch (err) { /* an old browser */ }
    notifyState();
  });
  notifyState();
  function notifyNew(card) {
    if (!("Notification" in window) || Notification.permission !== "granted") return;
    const title = card.querySelector("h3.title");
    const n = new Notification(notifyButton.dataset.new, {
      body: title ? title.textContent : "",
      tag: "planhost-" + card.dataset.approvalId,
    });
    n.onclick = () => {
      window.focus();
      const shown = document.getElementById("card-" + card.dataset.approvalId);
      if (shown) { shown.scrollIntoView({ block: "start" }); shown.focus(); }
    };
  }

  async function refreshCards() {
    const fresh = fragment(await get("/cards"));
    const freshIds = new Set();
    fresh.querySelectorAll("article.card").forEach((card) => {
      const id = card.dataset.approvalId;
      freshIds.add(id);
      if (document.getElementById("card-" + id)) return;
      notifyNew(card);
      // New work goes above the cards already answered.
      const answered = cardsBox.querySelector('article.card:not([data-status="pending"])');
      if (answered) answered.before(card);
      else cardsBox.append(card);
    });
    // A card that left the pending list shows how it ended, until the page is reloaded.
    for (const card of document.querySelectorAll('article.card[data-status="pending"]')) {
      if (!freshIds.has(card.dataset.approvalId)) {
        replaceCard(card, await get("/cards/" + encodeURIComponent(card.dataset.approvalId)));
      }
    }
    showEmpty();
  }

  /** Defers `part` until focus leaves `box`: never pull a control out from under the person. */
  function holdsFocus(box, part) {
    if (!box.contains(document.activeElement)) return false;
    parts.add(part);
    box.addEventListener("focusout", () => schedule(100, []), { once: true });
    return true;
  }

  const sessionItem = (id) => [...document.querySelectorAll("li.session")].find((l) => l.dataset.sessionId === id);

  async function refreshSession(id, part) {
    const li = sessionItem(id);
    if (!li || holdsFocus(li, part)) return;
    const fresh = fragment(await get("/sessions/" + encodeURIComponent(id))).querySelector("li.session");
    // The item as it is now (it may have been replaced meanwhile).
    const now = sessionItem(id);
    if (fresh && now) now.replaceWith(fresh);
  }

  async function refresh(what) {
    if (what.has("cards")) await refreshCards();
    const items = [...what].filter((p) => p.startsWith("session:")).map((p) => [p.slice("session:".length), p]);
    // A session the page does not show yet needs the whole list; then no item is fetched.
    const wholeList = what.has("sessions") || items.some(([id]) => !sessionItem(id));
    if (!wholeList) {
      for (const [id, part] of items) await refreshSession(id, part);
    }
    for (const [part, id, url] of [["sessions", "sessions-box", "/sessions"], ["publications", "publications-box", "/publications"], ["asks", "asks-box", "/asks"]]) {
      if (part === "sessions" ? !wholeList : !what.has(part)) continue;
      const box = document.getElementById(id);
      if (!box || holdsFocus(box, part)) continue;
      box.innerHTML = await get(url);
    }
    tick();
    updateTitle();
  }

  document.addEventListener("submit", async (e) => {
    const form = e.target;
    const replace = form.dataset.replace;
    if (!replace) return;
    e.preventDefault();
    const body = new URLSearchParams(new FormData(form));
    if (e.submitter && e.submitter.name) body.set(e.submitter.name, e.submitter.value);
    const card = replace === "card" ? form.closest("article.card") : null;
    const box = replace === "card" ? null : document.getElementById(replace);
    // Before the buttons are disabled, which takes the focus away from them.
    const hadFocus = card ? card.contains(document.activeElement) : false;
    form.querySelectorAll("button, select").forEach((b) => { b.disabled = true; });
    const enable = () => form.querySelectorAll("button, select").forEach((b) => { b.disabled = false; });
    const where = card || form.closest("article") || box;
    try {
      const r = await fetch(form.getAttribute("action"), {
        method: "POST",
        credentials: "same-origin",
        headers: { "x-planhost-fetch": "1", "content-type": "application/x-www-form-urlencoded" },
        body,
      });
      const text = await r.text();
      const isHtml = (r.headers.get("content-type") || "").startsWith("text/html");
      if (isHtml && card && text.includes("<article")) {
        replaceCard(card, text, hadFocus);
      } else if (isHtml && box && (r.ok || r.status === 409)) {
        box.innerHTML = text;
        const err = box.querySelector(".error");
        if (err) { err.setAttribute("tabindex", "-1"); err.focus(); }
      } else {
        enable();
        // Refused before the host saw it: the access ended, or the page asked for something
        // that is not there any more.
        showProblem(where, problem(r.status === 401 ? "Unauthorized" : r.status === 404 ? "Gone" : "Failed"));
      }
    } catch (err) {
      // No answer at all: the host (and its page) is not running.
      enable();
      showProblem(where, problem("Offline"));
    }
    tick();
    updateTitle();
  });

  // The copy-path buttons.
  document.addEventListener("click", async (e) => {
    const button = e.target.closest("button.copy-path");
    if (!button) return;
    try {
      await navigator.clipboard.writeText(button.dataset.copy);
      button.textContent = document.body.dataset.copied;
    } catch (err) {
      // No clipboard (an insecure context): select the path for the person to copy.
      const path = button.parentElement.querySelector("code.path");
      if (path) window.getSelection().selectAllChildren(path);
    }
  });

  function connect() {
    const source = new EventSource("/events");
    source.addEventListener("open", () => {
      live.textContent = live.dataset.connected;
      live.dataset.state = "connected";
      schedule(0);
    });
    const parse = (e) => {
      try { return JSON.parse(e.data); } catch (err) { return null; }
    };
    source.addEventListener("change", (e) => {
      const data = parse(e);
      const kind = data && data.kind;
      schedule(100, kind ? touched(data, TOUCHES[kind] || ["session"]) : ALL);
    });
    source.addEventListener("tools", (e) => schedule(100, touched(parse(e), ["session"])));
    source.addEventListener("error", async () => {
      live.textContent = live.dataset.lost;
      live.dataset.state = "lost";
      // Why: the host is down (the browser keeps trying), or the page's access ended (a new
      // token), which no retry mends.
      try {
        const r = await fetch("/cards", { credentials: "same-origin", headers: { "x-planhost-fetch": "1" } });
        if (r.status === 401) {
          source.close();
          setText(live, live.dataset.revoked);
          live.dataset.state = "revoked";
        }
      } catch (err) {
        live.textContent = live.dataset.down;
        live.dataset.state = "lost";
      }
    });
  }

  // The diagnostics panel loads when it is opened (and again on each opening).
  const diagnostics = document.getElementById("diagnostics");
  diagnostics.addEventListener("toggle", async () => {
    if (!diagnostics.open) return;
    const box = document.getElementById("diagnostics-box");
    try {
      box.innerHTML = await get("/diagnostics");
      localTimes();
    } catch (err) {
      box.replaceChildren(problem(String(err).includes("401") ? "Unauthorized" : "Offline"));
    }
  });

  // A link to one approval: its card, focused.
  const linked = location.pathname.match(/^\/approvals\/([^/]+)$/);
  if (linked) {
    const card = document.getElementById("card-" + decodeURIComponent(linked[1]));
    if (card) card.focus();
  }
  updateTitle();
  tick();
  setInterval(tick, 1000);
  connect();
})();
