"use strict";
// Every text from the data goes into the page with textContent (el() below), never as markup.
(function () {
  const base = location.pathname.endsWith("/") ? location.pathname : location.pathname + "/";
  const LETTERS = "abcdefghijklmnopqrstuvwxyz";
  // Chunk j's label like a spreadsheet column: A..Z, then AA, AB, ... (any number of chunks).
  function chunkLetter(j) {
    let out = "";
    for (let n = j + 1; n > 0; n = Math.floor((n - 1) / 26)) out = LETTERS[(n - 1) % 26].toUpperCase() + out;
    return out;
  }
  let data = null, pos = 0, focus = 0;
  const undoStack = [], lookedHere = new Set();
  // Chunks picked on a claim not labelled yet: kept here, not saved, until 1, 2 (or 3)
  // records the verdict the person gives (a chunk key is no verdict).
  const picked = new Map();
  const pickKey = (s, kind, i) => `${s.id}\u0000${kind}\u0000${i}`;
  function pickedChunks(s, kind, i) { return picked.get(pickKey(s, kind, i)) || []; }

  /*BIDI*/
  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v; else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v);
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.append(kid instanceof Node ? kid : textNode(node, String(kid)));
    }
    return node;
  }
  const $ = (id) => document.getElementById(id);
  function say(text, isError) { const s = $("status"); s.textContent = text || ""; s.classList.toggle("error", !!isError); }

  function sample() { return data.samples[pos]; }
  function items(s) {
    const out = [];
    s.claims.forEach((_, i) => out.push({ type: "claim", i }));
    s.chunks.forEach((_, j) => out.push({ type: "chunk", i: j }));
    s.reference_claims.forEach((_, i) => out.push({ type: "reference", i }));
    return out;
  }
  function labelled(s, it) {
    const L = s.labels;
    if (it.type === "claim") return String(it.i) in L.claims;
    if (it.type === "chunk") return String(it.i) in L.chunks;
    return String(it.i) in L.reference;
  }
  function complete(s) {
    return s.claims.every((_, i) => String(i) in s.labels.claims) &&
           s.chunks.every((_, j) => String(j) in s.labels.chunks);
  }
  function looked(s) { return lookedHere.has(s.id) || $("show-judge").checked; }

  function progressText() {
    const p = data.progress;
    return `${p.done} of ${p.total} labelled` + (p.skipped ? ` · ${p.skipped} skipped` : "");
  }

  function chunkName(j) { return "chunk " + chunkLetter(j); }

  function picks(s, chosen, onToggle) {
    return el("span", { class: "picks" }, " stated in: ",
      s.chunks.map((_, j) => el("button", { type: "button", class: chosen.includes(j) ? "on" : "",
        title: chunkName(j), onclick: (ev) => { ev.stopPropagation(); onToggle(j); } }, chunkLetter(j))));
  }

  function claimAnswer(lab, chosen) {
    if (!lab) return el("div", { class: "answer" }, "not labelled yet" +
      (chosen.length ? " (picked " + chosen.map((j) => chunkLetter(j)).join(", ") + ": not saved until 1 or 2)" : ""));
    const where = lab.chunks.length ? "stated in " + lab.chunks.map((j) => chunkLetter(j)).join(", ") : "in no chunk";
    return el("div", { class: "answer set" + (lab.label === "wrong" ? " wrong" : "") }, `${lab.label}, ${where}`);
  }

  function render() {
    const s = sample();
    $("progress").textContent = progressText();
    $("position").textContent = `sample ${pos + 1} of ${data.samples.length}`;
    const all = items(s);
    focus = Math.max(0, Math.min(focus, all.length - 1));
    const root = $("sample");
    root.replaceChildren();
    const head = el("h2", null, s.id, " ", complete(s) ? el("span", { class: "done-badge" }, "✓ complete") : null,
      s.labels.skip !== null ? el("span", { class: "looked" }, ` skipped: ${s.labels.skip}`) : null,
      s.labels.looked ? el("span", { class: "looked" }, " · labelled after looking at the judge") : null);
    const turns = s.history || [];
    root.append(head,
      turns.length ? el("h2", null, `Conversation before the question · ${turns.length} ${turns.length === 1 ? "turn" : "turns"}`) : null,
      turns.length ? el("ol", { class: "turns", id: "history" }, turns.map(([role, text]) => el("li", { class: "turn turn-" + role },
        el("span", { class: "role" }, role), " ", el("span", { class: "text" }, text)))) : null,
      el("h2", null, "Question"), el("div", { class: "text", id: "question" }, s.question),
      el("h2", null, "Reference"), el("div", { class: "text", id: "reference" }, s.reference),
      el("h2", null, "Answer"), el("div", { class: "text", id: "answer" }, s.response));
    let k = 0;
    const focusCls = (n) => "item" + (n === focus ? " focus" : "");
    root.append(el("h2", null, "Claims of the answer"));
    s.claims.forEach((c, i) => {
      const n = k++, lab = s.labels.claims[String(i)];
      root.append(el("div", { class: focusCls(n), "data-item": n, id: `claim-${i}`, onclick: () => { focus = n; render(); } },
        el("div", { class: "claim-text" }, c.text), claimAnswer(lab, pickedChunks(s, "claim", i)),
        picks(s, lab ? lab.chunks : pickedChunks(s, "claim", i), (j) => toggleChunk("claim", i, j)),
        el("div", { class: "judge" }, `judge: ${c.judge.correct ? "correct" : "wrong"}, ` +
          (c.judge.chunks.length ? "stated in " + c.judge.chunks.map((j) => chunkLetter(j)).join(", ") : "in no chunk") +
          ` (${c.judge.bucket})`)));
    });
    root.append(el("h2", null, "Chunks: relevant = holds something the reference needs"));
    s.chunks.forEach((text, j) => {
      const n = k++, rel = s.labels.chunks[String(j)];
      root.append(el("div", { class: focusCls(n), "data-item": n, id: `chunk-${j}`, onclick: () => { focus = n; render(); } },
        el("span", { class: "chunk-key" }, chunkLetter(j)), el("span", { class: "chunk-text" }, text),
        el("div", { class: "answer" + (rel === undefined ? "" : " set") }, rel === undefined ? "not labelled yet" : rel ? "relevant" : "not relevant"),
        el("div", { class: "judge" }, `judge: ${s.judge_relevant[j] ? "relevant" : "not relevant"}`)));
    });
    if (s.reference_claims.length) {
      root.append(el("h2", null, "Claims of the reference (optional: for recall, claim recall, context utilization)"));
      s.reference_claims.forEach((c, i) => {
        const n = k++, lab = s.labels.reference[String(i)];
        root.append(el("div", { class: focusCls(n), "data-item": n, id: `reference-${i}`, onclick: () => { focus = n; render(); } },
          el("div", { class: "claim-text" }, c.text),
          el("div", { class: "answer" + (lab ? " set" : "") }, lab ? (lab.in_response ? "in the answer" : "not in the answer") :
            "not labelled yet" + (pickedChunks(s, "reference", i).length ? " (picked " + pickedChunks(s, "reference", i).map((j) => chunkLetter(j)).join(", ") + ": not saved until 1 or 2)" : "")),
          picks(s, lab ? lab.chunks : pickedChunks(s, "reference", i), (j) => toggleChunk("reference", i, j)),
          el("div", { class: "judge" }, `judge: ${c.judge.in_response ? "in the answer" : "not in the answer"}`)));
      });
    }
    const node = root.querySelector(".item.focus");
    if (node && node.scrollIntoView) node.scrollIntoView({ block: "nearest" });
  }

  function previousEvent(s, kind, i) {
    const L = s.labels, base = { kind, id: s.id, digest: s.digest };
    if (kind === "claim") { const v = L.claims[String(i)]; return { ...base, claim: i, label: v ? v.label : null, chunks: v ? v.chunks : [] }; }
    if (kind === "chunk") { const v = L.chunks[String(i)]; return { ...base, chunk: i, relevant: v === undefined ? null : v }; }
    if (kind === "reference") { const v = L.reference[String(i)]; return { ...base, claim: i, in_response: v ? v.in_response : null, chunks: v ? v.chunks : [] }; }
    return { ...base, reason: L.skip };
  }

  async function post(event, recordUndo) {
    const s = data.samples.find((x) => x.id === event.id);
    if (recordUndo) undoStack.push(previousEvent(s, event.kind, event.kind === "chunk" ? event.chunk : event.claim));
    if (event.kind !== "skip") event.looked = looked(s);
    say("saving…");  // so "saved" always means this event, not the one before
    let resp;
    try {
      resp = await fetch(base + "api/label", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(event) });
    } catch (err) { say("not saved: the review server is not reachable (" + err + ")", true); return false; }
    const body = await resp.json().catch(() => ({ error: resp.statusText }));
    if (!resp.ok) { say("not saved: " + (body.error || resp.status), true); return false; }
    s.labels = body.labels; data.progress = body.progress;
    say("saved");
    return true;
  }

  function advance() {
    const s = sample(), all = items(s);
    for (let n = focus + 1; n < all.length; n++) if (!labelled(s, all[n])) { focus = n; return; }
    if (focus < all.length - 1) focus += 1;
  }

  async function labelItem(key) {
    const s = sample(), it = items(s)[focus];
    if (!it) return;
    let event = null;
    if (it.type === "claim") {
      const cur = s.labels.claims[String(it.i)], chunks = cur ? cur.chunks : pickedChunks(s, "claim", it.i);
      if (key === "1") event = { kind: "claim", claim: it.i, label: "correct", chunks };
      if (key === "2") event = { kind: "claim", claim: it.i, label: "wrong", chunks };
      if (key === "3") event = { kind: "claim", claim: it.i, label: "wrong", chunks: [] };
      if (key === "2" && !chunks.length) say("wrong: pick the chunk(s) stating it with their letters (or 3: in no chunk)");
    } else if (it.type === "chunk") {
      if (key === "1" || key === "2") event = { kind: "chunk", chunk: it.i, relevant: key === "1" };
    } else if (key === "1" || key === "2") {
      const cur = s.labels.reference[String(it.i)];
      event = { kind: "reference", claim: it.i, in_response: key === "1", chunks: cur ? cur.chunks : pickedChunks(s, "reference", it.i) };
    }
    if (!event) return;
    if (await post({ ...event, id: s.id, digest: s.digest }, true)) {
      if (it.type !== "chunk") picked.delete(pickKey(s, it.type, it.i));
      if (!(it.type === "claim" && key === "2" && !event.chunks.length)) advance();
      render();
    }
  }

  async function toggleChunk(kind, i, j) {
    const s = sample();
    if (j >= s.chunks.length) return;
    const cur = kind === "claim" ? s.labels.claims[String(i)] : s.labels.reference[String(i)];
    const had = cur ? cur.chunks : pickedChunks(s, kind, i);
    const chunks = had.includes(j) ? had.filter((x) => x !== j) : [...had, j].sort((a, b) => a - b);
    if (!cur) {
      // Not labelled yet: the pick waits for the verdict (1 or 2), which saves both.
      picked.set(pickKey(s, kind, i), chunks);
      say(kind === "claim" ? "chunks picked, not saved: 1 correct, 2 wrong records them"
                           : "chunks picked, not saved: 1 in the answer, 2 not in it records them");
    } else if (kind === "claim") {
      await post({ kind, id: s.id, digest: s.digest, claim: i, label: cur.label, chunks }, true);
    } else {
      await post({ kind, id: s.id, digest: s.digest, claim: i, in_response: cur.in_response, chunks }, true);
    }
    render();
  }

  async function undo() {
    const event = undoStack.pop();
    if (!event) { say("nothing to undo"); return; }
    const at = data.samples.findIndex((x) => x.id === event.id);
    if (at >= 0) pos = at;
    if (await post(event, false)) { say("undone"); render(); }
  }

  async function skip() {
    const s = sample();
    const reason = s.labels.skip === null ? prompt("Why skip this sample? (skipping breaks the random sample; the estimate reports it)") : null;
    if (s.labels.skip === null && !reason) return;
    await post({ kind: "skip", id: s.id, digest: s.digest, reason: s.labels.skip === null ? reason : null }, true);
    render();
  }

  function move(delta) {
    pos = Math.max(0, Math.min(data.samples.length - 1, pos + delta));
    focus = 0; $("estimate").hidden = true;
    if ($("show-judge").checked) lookedHere.add(sample().id);
    render();
  }

  function fmt(x) { return x === null || x === undefined ? "–" : x.toFixed(3); }
  function span(lo, hi) { return lo === null || lo === undefined ? "–" : `[${fmt(lo)}, ${fmt(hi)}]`; }

  async function showEstimate() {
    const box = $("estimate");
    box.hidden = false;
    box.replaceChildren(el("p", null, "estimating…"));
    const resp = await fetch(base + "api/estimate");
    const est = await resp.json();
    if (!resp.ok) { box.replaceChildren(el("p", { class: "status error" }, est.error || "no estimate")); return; }
    const pct = Math.round(est.confidence * 100) + "%";
    const rows = Object.entries(est.metrics).map(([name, m]) => el("tr", null,
      el("td", null, name), el("td", null, fmt(m.judge.estimate)),
      el("td", null, fmt(m.human.estimate)), el("td", null, span(m.human.low, m.human.high)), el("td", null, String(m.human.n)),
      el("td", null, fmt(m.corrected.estimate)), el("td", null, span(m.corrected.low, m.corrected.high)),
      el("td", null, `${m.corrected.n}/${m.corrected.N}`)));
    box.replaceChildren(el("h2", null, `Estimate (${pct} intervals)`),
      rows.length ? el("table", { id: "estimate-table" }, el("tr", null, ["metric", "judge", "people", pct + " CI", "n", "corrected", pct + " CI", "n/N"].map((h) => el("th", null, h))), rows)
        : el("p", null, "no sample is completely labelled yet"),
      el("ul", null, (est.notes || []).map((n) => el("li", null, n))));
    box.scrollIntoView && box.scrollIntoView({ block: "start" });
  }

  // Keys run one after another: a fast typist's next key waits for the last save, so it
  // acts on the item the last one moved to.
  let queue = Promise.resolve();
  function later(fn) { queue = queue.then(fn).catch((err) => say(String(err), true)); }

  document.addEventListener("keydown", (ev) => {
    if (!data || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.target && (ev.target.tagName === "INPUT" && ev.target.type !== "checkbox")) return;
    const key = ev.key;
    // Lower-case letters pick chunks A-Z; commands are upper-case (Shift) so they never clash.
    if (key === "ArrowDown") later(() => { focus = Math.min(items(sample()).length - 1, focus + 1); render(); });
    else if (key === "ArrowUp") later(() => { focus = Math.max(0, focus - 1); render(); });
    else if (key === "ArrowRight") later(() => move(1));
    else if (key === "ArrowLeft") later(() => move(-1));
    else if (key === "1" || key === "2" || key === "3") later(() => labelItem(key));
    else if (key === "U" || key === "Backspace") later(undo);
    else if (key === "V") later(() => $("show-judge").click());
    else if (key === "S") later(skip);
    else if (key === "E") later(showEstimate);
    else if (LETTERS.includes(key) && key.length === 1) {
      later(() => {
        const it = items(sample())[focus];
        if (it && (it.type === "claim" || it.type === "reference")) return toggleChunk(it.type, it.i, LETTERS.indexOf(key));
      });
    } else return;
    ev.preventDefault();
  });

  $("show-judge").addEventListener("change", () => {
    document.body.classList.toggle("judge-on", $("show-judge").checked);
    if ($("show-judge").checked && data) lookedHere.add(sample().id);
  });
  $("prev").addEventListener("click", () => move(-1));
  $("next").addEventListener("click", () => move(1));
  $("undo").addEventListener("click", undo);
  $("skip").addEventListener("click", skip);
  $("estimate-btn").addEventListener("click", showEstimate);

  fetch(base + "api/state").then((r) => r.json()).then((state) => {
    data = state;
    if (!data.samples.length) { say("no sample to review", true); return; }
    const first = data.samples.findIndex((s) => !complete(s) && s.labels.skip === null);
    pos = first >= 0 ? first : 0;
    render();
  }).catch((err) => say("could not load the samples: " + err, true));
})();
