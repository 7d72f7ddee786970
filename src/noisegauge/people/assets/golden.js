"use strict";
// Every text from the data goes into the page with textContent (el() below), never as markup;
// every data text takes its direction from its own letters (dir="auto").
(function () {
  const base = location.pathname.endsWith("/") ? location.pathname : location.pathname + "/";
  const LETTERS = "abcdefghijklmnopqrstuvwxyz";
  const ROLE_KEYS = { "1": "answer", "2": "distractor", "3": "drop" };
  const ROLE_NAMES = { answer: "holds the answer", distractor: "trap", drop: "dropped" };
  function itemLetter(j) {
    let out = "";
    for (let n = j + 1; n > 0; n = Math.floor((n - 1) / 26)) out = LETTERS[(n - 1) % 26].toUpperCase() + out;
    return out;
  }
  let data = null, pos = 0, focus = 0, editing = false;
  const undoStack = [];

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v; else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v);
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }
  const $ = (id) => document.getElementById(id);
  function say(text, isError) { const s = $("status"); s.textContent = text || ""; s.classList.toggle("error", !!isError); }
  const norm = (t) => String(t || "").replace(/\s+/g, " ").trim();

  function row() { return data.rows[pos]; }
  function nItems(r) { return 1 + r.pool.length; }  // the reference, then the pool

  function progressText() {
    const p = data.progress;
    return `${p.accepted} accepted · ${p.rejected} rejected · ${p.total - p.accepted - p.rejected} to go (of ${p.total})`;
  }

  // A sentence is in the reference when its text is: clicking it again takes it out.
  function withSentence(ref, sentence) {
    const r = norm(ref), s = norm(sentence);
    if (s && r.includes(s)) return norm(r.replace(s, ""));
    return r ? r + " " + s : s;
  }

  function render() {
    const r = row(), rv = r.review;
    $("progress").textContent = progressText();
    $("position").textContent = `row ${pos + 1} of ${data.rows.length}`;
    focus = Math.max(0, Math.min(focus, nItems(r) - 1));
    const root = $("sample");
    // What the person is typing survives a redraw (a save's answer arriving meanwhile).
    const open = editing ? $("reference-edit") : null, typed = open ? open.value : null;
    root.replaceChildren();
    const badge = rv.verdict === "accept" ? el("span", { class: "badge accept", id: "verdict" }, "✓ accepted")
      : rv.verdict === "reject" ? el("span", { class: "badge reject", id: "verdict" }, "✗ rejected") : null;
    const info = [r.draft.method, typeof r.draft.confidence === "number" ? `confidence ${r.draft.confidence.toFixed(2)}` : null].filter(Boolean).join(", ");
    root.append(el("h2", null, el("span", { dir: "auto", id: "row-id" }, r.id), " ", badge),
      info ? el("div", { class: "draft-info" }, "drafted: " + info) : null,
      r.status && r.status !== "drafted" ? el("div", { class: "banner", id: "banner", dir: "auto" },
        r.status === "no_answer" ? "no answer found in the documents" : "conflict", r.reason ? ": " + r.reason : "") : null,
      (r.history || []).length ? el("h2", null, "Conversation before the question") : null,
      (r.history || []).length ? el("ol", { class: "turns", id: "history" }, r.history.map(([role, text]) => el("li", { class: "turn turn-" + role },
        el("span", { class: "role" }, role), " ", el("span", { class: "text", dir: "auto" }, text)))) : null,
      el("h2", null, "Question"), el("div", { class: "text", id: "question", dir: "auto" }, r.question));
    const cls = (n, extra) => "item" + (n === focus ? " focus" : "") + (extra ? " " + extra : "");
    const refBox = el("div", { class: cls(0), "data-item": 0, id: "reference-item", onclick: () => { focus = 0; render(); } },
      el("h2", null, "Reference", el("span", { class: "tag", id: "reference-tag" }, rv.edited ? "edited" : "as drafted")),
      editing ? el("textarea", { id: "reference-edit", dir: "auto", "aria-label": "reference" })
        : el("div", { class: "text", id: "reference", dir: "auto" }, rv.reference || "(none yet)"),
      editing ? null : el("button", { type: "button", id: "edit-btn", onclick: (ev) => { ev.stopPropagation(); startEdit(); } }, "edit ", el("kbd", null, "⏎")));
    root.append(refBox);
    if (editing) { const ta = $("reference-edit"); ta.value = typed === null ? rv.reference : typed; }
    root.append(el("h2", null, "Chunks: the first ones drafted as holding the answer, then the traps"));
    r.pool.forEach((item, j) => {
      const n = j + 1, role = rv.roles[j], conflict = r.conflicts.includes(item.id);
      const origin = item.origin === "chunk" ? "drafted: holds the answer"
        : `drafted: trap (${item.kind || "?"})` + (item.differs ? ` · differs: ${item.differs}` : "");
      const ref = norm(rv.reference);
      const sentences = role === "answer" ? el("div", { class: "sentences" },
        item.sentences.map((s, k) => el("button", { type: "button", class: "sentence" + (ref.includes(norm(s)) ? " on" : ""),
          "data-sentence": k, onclick: (ev) => { ev.stopPropagation(); focus = n; toggleSentence(j, k); } },
          k < 26 ? el("kbd", null, LETTERS[k]) : null, el("span", { dir: "auto" }, s)))) : el("div", { class: "chunk-text", dir: "auto" }, item.text);
      root.append(el("div", { class: cls(n, `role-${role}` + (conflict ? " conflict" : "")), "data-item": n, id: `item-${j}`,
        onclick: () => { focus = n; render(); } },
        el("span", { class: "chunk-key" }, itemLetter(j)),
        el("span", { class: "origin", dir: "auto" }, item.id, " · ", origin, conflict ? (rv.set.includes(j) ? " · in conflict: settled" : " · in conflict: settle it") : ""),
        sentences,
        el("div", { class: "roles" }, Object.entries(ROLE_KEYS).map(([key, name]) => el("button", {
          type: "button", class: role === name ? "on" : "", "data-role": name,
          onclick: (ev) => { ev.stopPropagation(); focus = n; setRole(j, name); } }, el("kbd", null, key), " " + ROLE_NAMES[name])))));
    });
    const node = root.querySelector(".item.focus");
    if (node && node.scrollIntoView) node.scrollIntoView({ block: "nearest" });
    if (editing) { const ta = $("reference-edit"); ta.focus(); ta.setSelectionRange(ta.value.length, ta.value.length); }
  }

  function previousEvent(r, kind, item) {
    const rv = r.review, b = { kind, id: r.id, digest: r.digest };
    if (kind === "verdict") return { ...b, verdict: rv.verdict };
    if (kind === "edit") return { ...b, reference: rv.edited ? rv.reference : null };
    return { ...b, item, role: rv.set.includes(item) ? rv.roles[item] : null };
  }

  async function post(event, recordUndo) {
    const r = data.rows.find((x) => x.id === event.id);
    if (recordUndo) undoStack.push(previousEvent(r, event.kind, event.item));
    say("saving…");  // so "saved" always means this event, not the one before
    let resp;
    try {
      resp = await fetch(base + "api/label", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(event) });
    } catch (err) { if (recordUndo) undoStack.pop(); say("not saved: the review server is not reachable (" + err + ")", true); return false; }
    const body = await resp.json().catch(() => ({ error: resp.statusText }));
    if (!resp.ok) { if (recordUndo) undoStack.pop(); say("not saved: " + (body.error || resp.status), true); return false; }
    r.review = body.review; data.progress = body.progress;
    say("saved");
    return true;
  }
  function ev(kind, extra) { const r = row(); return { kind, id: r.id, digest: r.digest, ...extra }; }

  async function setRole(j, role) {
    if (await post(ev("role", { item: j, role }), true)) {
      if (role !== "answer" && focus < nItems(row()) - 1) focus += 1;
      render();
    }
  }

  async function toggleSentence(j, k) {
    const r = row(), item = r.pool[j];
    if (r.review.roles[j] !== "answer") { say(`chunk ${itemLetter(j)} is not marked as holding the answer: press 1 on it first`, true); return; }
    if (k >= item.sentences.length) return;
    await post(ev("edit", { reference: withSentence(r.review.reference, item.sentences[k]) }), true);
    render();
  }

  function startEdit() { editing = true; focus = 0; render(); }
  async function finishEdit(save) {
    if (!editing) return;
    const text = $("reference-edit").value;
    editing = false;
    if (save && text !== row().review.reference) await post(ev("edit", { reference: text }), true);
    render();
  }

  function nextUndecided() {
    for (let step = 1; step <= data.rows.length; step++) {
      const at = (pos + step) % data.rows.length;
      if (data.rows[at].review.verdict === null) return at;
    }
    return -1;
  }
  async function verdict(v) {
    await finishEdit(true);  // a click on accept while typing keeps what was typed
    if (await post(ev("verdict", { verdict: v }), true)) {
      const at = nextUndecided();
      if (at >= 0) { pos = at; focus = 0; say(v === "accept" ? "accepted" : "rejected"); }
      else say(`${v === "accept" ? "accepted" : "rejected"}: every row is decided; export with noisegauge testset export`);
      render();
    }
  }

  async function undo() {
    const event = undoStack.pop();
    if (!event) { say("nothing to undo"); return; }
    const at = data.rows.findIndex((x) => x.id === event.id);
    if (at >= 0) pos = at;
    if (await post(event, false)) { say("undone"); render(); }
  }

  function move(delta) { pos = Math.max(0, Math.min(data.rows.length - 1, pos + delta)); focus = 0; render(); }

  // Keys run one after another: a fast typist's next key waits for the last save.
  let queue = Promise.resolve();
  function later(fn) { queue = queue.then(fn).catch((err) => say(String(err), true)); }

  document.addEventListener("keydown", (e) => {
    if (!data || e.ctrlKey || e.metaKey || e.altKey) return;
    const key = e.key;
    if (editing) {
      if (key === "Enter" && !e.shiftKey) { e.preventDefault(); later(() => finishEdit(true)); }
      else if (key === "Escape") { e.preventDefault(); later(() => finishEdit(false)); }
      return;  // everything else is typing
    }
    if (e.target && e.target.tagName === "INPUT") return;
    if (key === "ArrowDown") later(() => { focus = Math.min(nItems(row()) - 1, focus + 1); render(); });
    else if (key === "ArrowUp") later(() => { focus = Math.max(0, focus - 1); render(); });
    else if (key === "ArrowRight") later(() => move(1));
    else if (key === "ArrowLeft") later(() => move(-1));
    else if (key === "Enter") later(startEdit);
    else if (key in ROLE_KEYS) later(() => { if (focus > 0) return setRole(focus - 1, ROLE_KEYS[key]); say("pick a chunk first (↓)"); });
    else if (key === "A") later(() => verdict("accept"));
    else if (key === "R") later(() => verdict("reject"));
    else if (key === "U" || key === "Backspace") later(undo);
    else if (key === "D") later(async () => { if (row().review.edited && await post(ev("edit", { reference: null }), true)) render(); });
    else if (key.length === 1 && LETTERS.includes(key)) later(() => { if (focus > 0) return toggleSentence(focus - 1, LETTERS.indexOf(key)); say("pick a chunk holding the answer first (↓)"); });
    else return;
    e.preventDefault();
  });

  $("prev").addEventListener("click", () => later(() => move(-1)));
  $("next").addEventListener("click", () => later(() => move(1)));
  $("accept").addEventListener("click", () => later(() => verdict("accept")));
  $("reject").addEventListener("click", () => later(() => verdict("reject")));
  $("undo").addEventListener("click", () => later(undo));

  fetch(base + "api/state").then((r) => r.json()).then((state) => {
    data = state;
    if (!data.rows.length) { say("no row to review", true); return; }
    const first = data.rows.findIndex((r) => r.review.verdict === null);
    pos = first >= 0 ? first : 0;
    render();
  }).catch((err) => say("could not load the rows: " + err, true));
})();
