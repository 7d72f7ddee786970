/* noisegauge report: draws the samples list and the sample view from the embedded JSON.
   Data only ever reaches the page as text (textContent), never as markup. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  const D = JSON.parse(document.getElementById("ng-data").textContent);
  const S = D.samples, N = D.names, CH = D.chunks;
  const COL = {};
  N.forEach((n, i) => { COL[n] = i; });
  const LOWER = new Set(D.lower);
  const WORST = ["m", "h", "in", "rn", "s", "g"];  // colour of overlapping highlights
  const PAGE = 50;
  const LIST_METRICS = ["noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "hallucination",
    "precision", "context_precision", "noise_misattribution"].filter((n) => n in COL);

  /*BIDI*/
  function h(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === null || v === undefined || v === false) continue;
        if (k === "class") e.className = v;
        else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v === true ? "" : String(v));
      }
    }
    for (const k of kids.flat(Infinity)) {
      if (k === null || k === undefined || k === false) continue;
      e.appendChild(k instanceof Node ? k : textNode(e, String(k)));
    }
    return e;
  }
  const val = (s, n) => (n in COL ? s.m[COL[n]] : null);
  const noise = (s) => {
    const a = val(s, "noise_sensitivity_relevant"), b = val(s, "noise_sensitivity_irrelevant");
    return a === null || b === null ? null : a + b;
  };
  const fmt = (v, d = 2) => (v === null || v === undefined ? "–" : v.toFixed(d));
  const label = (s) => (s.id !== null && s.id !== undefined ? s.id : "row " + s.n);
  const codeOf = (c) => c.b;

  /* ---------- routing between panels ---------- */
  const panels = Array.from(document.querySelectorAll(".panel"));
  const tabs = Array.from(document.querySelectorAll(".tab"));
  // Panels are "p-<name>" so that "#<name>" is a route, never an anchor the browser jumps to.
  function show(id) {
    const target = document.getElementById("p-" + id) ? "p-" + id : "p-overview";
    const tab = document.getElementById(target).dataset.tab;
    panels.forEach((p) => p.classList.toggle("active", p.id === target));
    tabs.forEach((t) => t.classList.toggle("active", t.dataset.tab === tab));
  }
  function route() {
    const hash = decodeURIComponent(location.hash.slice(1));
    hideTip();
    if (hash.startsWith("s=")) {
      const pos = parseInt(hash.slice(2), 10);
      if (pos >= 0 && pos < S.length) { drawSample(pos); show("sample"); window.scrollTo(0, 0); return; }
    }
    if (hash === "samples") drawList();
    show(hash || "overview");
    window.scrollTo(0, 0);
  }
  window.addEventListener("hashchange", route);

  /* ---------- samples list ---------- */
  const st = { q: "", status: "", bucket: "", metric: LIST_METRICS[0] || N[0], min: "", max: "",
    level: "", sort: "worst", dir: -1, page: 0 };
  let view = [];
  const haystack = S.map((s) => [label(s), s.q || "", s.a || "", s.w || "",
    ...(s.c || []).map((c) => c.t)].join("\n").toLowerCase());
  const levels = Array.from(new Set(S.filter((s) => "level" in s).map((s) => s.level))).sort((a, b) => a - b);

  function worstKey(s) {
    if (s.s !== "ok") return [s.s === "undefined" ? 1 : 2, 0, 0, 0];
    const p = val(s, "precision");
    return [0, -(noise(s) || 0), -(val(s, "hallucination") || 0), p === null ? 1 : p];
  }
  function cmp(a, b) {
    if (st.sort === "worst") {
      const ka = worstKey(a), kb = worstKey(b);
      for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] - kb[i];
      return a.n - b.n;
    }
    if (st.sort === "n") return st.dir * (a.n - b.n);
    if (st.sort === "id") return st.dir * String(label(a)).localeCompare(String(label(b)));
    const va = val(a, st.sort), vb = val(b, st.sort);
    if (va === null && vb === null) return a.n - b.n;
    if (va === null) return 1;
    if (vb === null) return -1;
    return st.dir * (va - vb) || a.n - b.n;
  }
  function hasBucket(s, b) {
    const cs = s.c || [];
    if (b === "noise") return cs.some((c) => c.b === "rn" || c.b === "in");
    return cs.some((c) => codeOf(c) === b);
  }
  function applyFilters() {
    const q = st.q.trim().toLowerCase();
    const lo = st.min === "" ? null : parseFloat(st.min), hi = st.max === "" ? null : parseFloat(st.max);
    view = [];
    S.forEach((s, i) => {
      if (st.status && s.s !== st.status) return;
      if (st.bucket && !hasBucket(s, st.bucket)) return;
      if (st.level !== "" && String(s.level) !== st.level) return;
      if (lo !== null || hi !== null) {
        const v = val(s, st.metric);
        if (v === null || (lo !== null && v < lo - 1e-9) || (hi !== null && v > hi + 1e-9)) return;
      }
      if (q && haystack[i].indexOf(q) < 0) return;
      view.push(i);
    });
    view.sort((a, b) => cmp(S[a], S[b]));
  }

  function option(value, text, selected) { return h("option", { value: value, selected: selected }, text); }
  function drawFilters() {
    const box = document.getElementById("filters");
    if (box.childNodes.length) return;
    const upd = (key) => (ev) => { st[key] = ev.target.value; st.page = 0; drawList(); };
    box.append(...[
      h("input", { type: "search", id: "f-q", placeholder: "Search id, question, answer, claims…",
        "aria-label": "search", oninput: upd("q") }),
      h("label", null, "status", h("select", { id: "f-status", onchange: upd("status") },
        option("", "any"), option("ok", "ok"), option("undefined", "undefined"), option("error", "error"))),
      h("label", null, "has claim", h("select", { id: "f-bucket", onchange: upd("bucket") },
        option("", "any"), option("noise", "any noise"),
        Object.entries(D.buckets).map(([code, text]) => option(code, text)))),
      h("label", null, h("select", { id: "f-metric", "aria-label": "metric", onchange: upd("metric") },
        N.map((n) => option(n, D.labels[n] || n, n === st.metric))),
        h("input", { type: "number", id: "f-min", step: "0.05", min: "0", max: "1", placeholder: "min",
          "aria-label": "minimum", oninput: upd("min") }), "–",
        h("input", { type: "number", id: "f-max", step: "0.05", min: "0", max: "1", placeholder: "max",
          "aria-label": "maximum", oninput: upd("max") })),
      levels.length ? h("label", null, "level", h("select", { id: "f-level", onchange: upd("level") },
        option("", "any"), levels.map((l) => option(String(l), String(l))))) : null,
      h("label", null, "sort", h("select", { id: "f-sort", onchange: (ev) => {
        st.sort = ev.target.value; st.dir = st.sort === "n" || st.sort === "id" || !LOWER.has(st.sort) ? 1 : -1;
        st.page = 0; drawList(); } },
      option("worst", "worst first"), option("n", "input order"), option("id", "id"),
      N.map((n) => option(n, D.labels[n] || n)))),
      h("span", { class: "count", id: "f-count" })].filter(Boolean));
  }

  function miniBar(s) {
    const cs = s.c || [];
    if (!cs.length) return null;
    const counts = {};
    cs.forEach((c) => { counts[codeOf(c)] = (counts[codeOf(c)] || 0) + 1; });
    return h("div", { class: "mini", title: Object.entries(counts).map(([k, v]) => D.buckets[k] + ": " + v).join(", ") },
      ["g", "s", "rn", "in", "h", "m"].filter((k) => counts[k]).map((k) =>
        h("span", { class: "bg-" + k, style: "width:" + (100 * counts[k] / cs.length).toFixed(1) + "%" })));
  }
  function heat(n, v) {
    if (v === null || !LOWER.has(n) || v <= 0) return null;
    return "background: rgba(220, 60, 40, " + (0.06 + 0.3 * Math.min(1, v)).toFixed(3) + ")";
  }
  function drawList() {
    drawFilters();
    applyFilters();
    const pages = Math.max(1, Math.ceil(view.length / PAGE));
    st.page = Math.min(st.page, pages - 1);
    const first = st.page * PAGE, rows = view.slice(first, first + PAGE);
    document.getElementById("f-count").textContent = view.length
      ? "showing " + (first + 1) + "–" + (first + rows.length) + " of " + view.length.toLocaleString() +
        (view.length !== S.length ? " (filtered from " + S.length.toLocaleString() + ")" : "")
      : "no sample matches";
    const sortBy = (key) => () => {
      if (st.sort === key) st.dir = -st.dir;
      else { st.sort = key; st.dir = key === "n" || key === "id" || !LOWER.has(key) ? 1 : -1; }
      document.getElementById("f-sort").value = key; drawList();
    };
    const th = (key, text, cls) => h("th", { class: (cls || "") + (st.sort === key ? " sorted" + (st.dir > 0 ? " asc" : "") : ""),
      onclick: sortBy(key), title: "sort by " + text }, text);
    const head = h("tr", null, th("n", "#", "num"), th("id", "id"), h("th", null, "status"), h("th", null, "question"),
      LIST_METRICS.map((n) => th(n, D.short[n] || n, "num")), h("th", null, "claims"));
    const colgroup = h("colgroup", null, h("col", { style: "width:52px" }), h("col", { style: "width:19%" }),
      h("col", { style: "width:88px" }), h("col", null), LIST_METRICS.map(() => h("col", { style: "width:82px" })),
      h("col", { style: "width:110px" }));
    const body = rows.map((i) => {
      const s = S[i];
      return h("tr", { "data-pos": i, onclick: () => { location.hash = "s=" + i; } },
        h("td", { class: "v" }, s.n), h("td", { title: label(s) }, h("a", { href: "#s=" + i }, label(s))),
        h("td", null, h("span", { class: "status st-" + s.s }, s.s)),
        h("td", { class: "q", title: s.q || s.w || "" }, s.q || s.w || ""),
        LIST_METRICS.map((n) => { const v = val(s, n);
          return h("td", { class: "v" + (v === null ? " undef" : ""), style: heat(n, v) }, fmt(v)); }),
        h("td", null, miniBar(s)));
    });
    const list = document.getElementById("list");
    list.replaceChildren(view.length ? h("table", { class: "list", id: "table" }, colgroup, h("thead", null, head), h("tbody", null, body))
      : h("p", { class: "empty" }, "No sample matches these filters."));
    const pager = document.getElementById("pager");
    const go = (p) => () => { st.page = p; drawList(); window.scrollTo(0, 0); };
    pager.replaceChildren(
      h("button", { type: "button", disabled: st.page === 0, onclick: go(st.page - 1) }, "‹ previous"),
      h("span", { class: "muted" }, "page " + (st.page + 1) + " of " + pages),
      h("button", { type: "button", disabled: st.page >= pages - 1, onclick: go(st.page + 1) }, "next ›"));
  }

  /* ---------- one sample ---------- */
  let current = null, pinned = null;

  function segments(text, marks) {
    const cuts = new Set([0, text.length]);
    marks.forEach((m) => { cuts.add(Math.max(0, Math.min(text.length, m.a))); cuts.add(Math.max(0, Math.min(text.length, m.b))); });
    const pts = Array.from(cuts).sort((x, y) => x - y);
    const out = [];
    for (let i = 0; i + 1 < pts.length; i++) {
      const a = pts[i], b = pts[i + 1];
      if (a === b) continue;
      out.push({ a: a, b: b, cover: marks.filter((m) => m.a <= a && m.b >= b) });
    }
    return out;
  }
  function responseNode(s) {
    const text = s.a || "";
    const marks = [];
    (s.c || []).forEach((c, i) => { if (c.sp) marks.push({ a: c.sp[0], b: c.sp[1], c: i, code: codeOf(c) }); });
    return h("div", { class: "text response" }, segments(text, marks).map((g) => {
      const piece = text.slice(g.a, g.b);
      if (!g.cover.length) return piece;
      const code = WORST.find((k) => g.cover.some((m) => m.code === k)) || "g";
      return h("span", { class: "hl b-" + code, "data-c": g.cover.map((m) => m.c).join(" ") }, piece);
    }));
  }
  function chunkMarks(s, j) {
    const marks = [];
    (s.c || []).forEach((c, i) => {
      (c.ev || []).forEach((e) => {
        if (e[0] !== j) return;
        let cls = e[3] === "x" ? "con" : e[3] === "m" ? "mis" : "sup";
        if (e[3] === "e" && (c.l || []).indexOf(j) >= 0) cls = "leak-" + c.b;
        marks.push({ a: e[1], b: e[2], c: i, cls: cls });
      });
    });
    return marks;
  }
  function chunkNode(s, k, j) {
    const text = CH[k[0]];
    const rel = k[1] === 1 ? "rel" : k[1] === 0 ? "irr" : "unk";
    const segs = segments(text, chunkMarks(s, j));
    return h("div", { class: "chunk " + rel, id: "chunk-" + j },
      h("div", { class: "ch" }, h("b", null, "#" + (j + 1)),
        h("span", { class: "tag " + rel }, rel === "rel" ? "relevant" : rel === "irr" ? "irrelevant" : "relevance unknown"),
        k[2] ? h("span", { class: "muted" }, k[2]) : null),
      h("div", { class: "text" }, segs.map((g) => {
        const piece = text.slice(g.a, g.b);
        if (!g.cover.length) return piece;
        const classes = Array.from(new Set(g.cover.map((m) => m.cls)));
        return h("span", { class: "mk " + classes.join(" "), "data-c": g.cover.map((m) => m.c).join(" ") }, piece);
      })));
  }
  function cref(s, j, crossed) {
    const k = (s.k || [])[j];
    const rel = !k ? "unk" : k[1] === 1 ? "rel" : k[1] === 0 ? "irr" : "unk";
    return h("a", { class: "cref " + rel + (crossed ? " x" : ""), href: "#", title: "chunk #" + (j + 1) + " (" +
      (rel === "rel" ? "relevant" : rel === "irr" ? "irrelevant" : "relevance unknown") + ")",
      onclick: (ev) => { ev.preventDefault(); const el = document.getElementById("chunk-" + j); if (el) el.scrollIntoView({ block: "nearest" }); } },
      "#" + (j + 1));
  }
  function claimWhy(s, c) {
    const bits = [];
    if (c.e && c.e.length) bits.push(h("span", null, "entailed by ", c.e.map((j) => cref(s, j))));
    if (c.x && c.x.length) bits.push(h("span", null, " contradicted by ", c.x.map((j) => cref(s, j, true))));
    if (c.m && c.m.length) {
      const ev = (c.ev || []).filter((e) => e[3] === "m");
      bits.push(h("span", null, " wrong detail ", ev.length ? "“" + ev[0][4] + "” " : "", "stated in ", c.m.map((j) => cref(s, j)), " about another entity"));
    } else if (c.cl !== undefined && c.b === "h") bits.push(h("span", null, " closest chunk ", cref(s, c.cl)));
    if (!c.sp) bits.push(h("span", null, " (not located in the answer text)"));
    return bits;
  }
  function tipLines(s, i) {
    const c = s.c[i];
    const lines = [h("div", { class: "tb" }, D.buckets[c.b] || c.b, c.ok ? " · correct per the reference" : " · wrong per the reference"),
      h("div", null, "“" + c.t + "”")];
    const list = (xs) => xs.map((j) => "#" + (j + 1) + (s.k && s.k[j] ? (s.k[j][1] === 1 ? " (relevant)" : s.k[j][1] === 0 ? " (irrelevant)" : "") : "")).join(", ");
    if (c.e && c.e.length) lines.push(h("div", null, "entailed by chunk " + list(c.e)));
    if (c.x && c.x.length) lines.push(h("div", null, "contradicted by chunk " + list(c.x)));
    if (c.l && c.l.length) lines.push(h("div", null, "leaked from chunk " + list(c.l)));
    if (c.m && c.m.length) {
      const ev = (c.ev || []).filter((e) => e[3] === "m");
      lines.push(h("div", null, "misattributed: " + (ev.length ? "“" + ev[0][4] + "” " : "") + "is stated in chunk " + list(c.m) + ", about another entity"));
    }
    if (!c.e && !c.m && c.cl !== undefined && !c.ok) lines.push(h("div", null, "closest chunk (a hint): #" + (c.cl + 1)));
    if (!c.e && !c.x && c.ok) lines.push(h("div", null, "no chunk entails it: the model knew it"));
    return lines;
  }
  const tip = document.getElementById("tip");
  function hideTip() { if (tip) tip.hidden = true; }
  function showTip(ev, ids) {
    if (!current || !ids.length) return;
    tip.replaceChildren(...ids.map((i) => h("div", null, tipLines(current, i))));
    tip.hidden = false;
    // Under the hovered text (above it near the bottom), starting where the line is hovered:
    // the tip stays in the column it belongs to and leaves the chunks visible.
    const line = Array.from(ev.target.getClientRects()).find((r) => ev.clientY >= r.top - 1 && ev.clientY <= r.bottom + 1)
      || ev.target.getBoundingClientRect();
    const x = Math.min(line.left, window.innerWidth - tip.offsetWidth - 8);
    const y = line.bottom + 8 + tip.offsetHeight > window.innerHeight ? line.top - tip.offsetHeight - 8 : line.bottom + 8;
    tip.style.left = Math.max(8, x) + "px";
    tip.style.top = Math.max(8, y) + "px";
  }
  function idsOf(el) { return (el.dataset.c || "").split(" ").filter(Boolean).map(Number); }
  function highlight(ids) {
    const set = new Set(ids);
    const root = document.getElementById("p-sample");
    root.querySelectorAll("[data-c]").forEach((el) => el.classList.toggle("on", idsOf(el).some((i) => set.has(i))));
    root.querySelectorAll("tr[data-claim]").forEach((tr) => tr.classList.toggle("on", set.has(Number(tr.dataset.claim))));
    const chunks = new Set();
    ids.forEach((i) => { const c = current.c[i]; [c.e, c.x, c.m].forEach((xs) => (xs || []).forEach((j) => chunks.add(j))); });
    root.querySelectorAll(".chunk").forEach((el) => el.classList.toggle("on", chunks.has(Number(el.id.slice(6)))));
    return chunks;
  }
  function pin(i) {
    pinned = pinned === i ? null : i;
    const chunks = highlight(pinned === null ? [] : [pinned]);
    if (pinned !== null && chunks.size) {
      const el = document.getElementById("chunk-" + Math.min(...chunks));
      if (el) el.scrollIntoView({ block: "nearest", behavior: "smooth" });
    }
  }
  function metricChips(s) {
    const names = ["noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "hallucination", "precision",
      "recall", "faithfulness", "context_precision", "noise_misattribution"].filter((n) => n in COL);
    return h("div", { class: "chips" }, names.map((n) => {
      const v = val(s, n), why = s.u && s.u[n];
      return h("span", { class: "mchip" + (LOWER.has(n) && v > 0 ? " bad" : ""), title: why ? "undefined: " + why : D.labels[n] },
        D.labels[n], h("b", null, v === null ? "undefined" : fmt(v)));
    }));
  }
  function legend(s) {
    const present = new Set((s.c || []).map(codeOf));
    return h("div", { class: "hl-legend" }, ["g", "s", "rn", "in", "h", "m"].filter((k) => present.has(k))
      .map((k) => h("span", { class: "badge b-" + k }, D.buckets[k])));
  }
  function claimsTable(s) {
    if (!(s.c || []).length) return h("p", { class: "muted" }, "No response claims.");
    return h("table", { class: "claims" }, h("tbody", null, s.c.map((c, i) =>
      h("tr", { "data-claim": i, onclick: () => pin(i) },
        h("td", { style: "width:128px" }, h("span", { class: "badge b-" + codeOf(c) }, D.buckets[codeOf(c)] || c.b)),
        h("td", null, c.t, h("div", { class: "why" }, claimWhy(s, c)))))));
  }
  function refClaims(s) {
    if (!(s.g || []).length) return h("p", { class: "muted" }, "No reference claims.");
    return h("ul", { class: "refclaims" }, s.g.map((g) => h("li", null,
      g[1] ? h("span", { class: "yes", title: "the response covers it" }, "✓ ") : h("span", { class: "no", title: "the response misses it" }, "✗ "),
      g[0], " ", h("span", { class: "why" }, g[2].length ? ["in ", g[2].map((j) => cref(s, j))] : "in no chunk"))));
  }
  function compareBlock(s, pos) {
    if (!D.other || !(String(pos) in D.pairs)) return null;
    const o = D.other[D.pairs[String(pos)]];
    const side = (title, x) => h("div", { class: "card" }, h("h3", null, title),
      x.a !== undefined ? responseNode(x) : null, h("div", { style: "margin-top:10px" },
        h("table", { class: "claims" }, h("tbody", null, (x.c || []).map((c) => h("tr", null,
          h("td", { style: "width:128px" }, h("span", { class: "badge b-" + codeOf(c) }, D.buckets[codeOf(c)] || c.b)),
          h("td", null, c.t)))))));
    const deltas = ["noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "hallucination", "precision"].filter((n) => n in COL)
      .map((n) => { const a = val(s, n), b = val(o, n); return h("span", { class: "mchip" }, D.labels[n],
        h("b", null, fmt(b) + " → " + fmt(a))); });
    return h("section", { style: "margin-top:16px" }, h("h3", null, "Compared with " + D.otherLabel),
      h("div", { class: "chips" }, deltas), h("div", { class: "side" }, side(D.thisLabel || "this run", s), side(D.otherLabel, o)));
  }
  // The turns before the question (a conversation): who said what, oldest first.
  const ROLE = { user: "User", assistant: "Assistant", system: "System" };
  function historyNode(s) {
    if (!s.hi || !s.hi.length) return null;
    return h("div", { class: "history" },
      h("h3", { style: "margin-top:0" }, "Conversation before the question · " + s.hi.length + (s.hi.length === 1 ? " turn" : " turns")),
      h("ol", { class: "turns" }, s.hi.map(([role, text]) => h("li", { class: "turn turn-" + role },
        h("span", { class: "role" }, ROLE[role] || role), h("div", { class: "text" }, text)))));
  }
  function drawSample(pos) {
    const s = S[pos];
    current = s; pinned = null;
    const at = view.length ? view.indexOf(pos) : -1;
    const order = at >= 0 ? view : S.map((_, i) => i);
    const k = at >= 0 ? at : pos;
    const nav = (p) => () => { if (p !== undefined) location.hash = "s=" + p; };
    const root = document.getElementById("p-sample");
    const notice = s.s === "error" ? h("div", { class: "notice error" }, h("b", null, "Error: "), s.w || "no reason given")
      : s.s === "undefined" ? h("div", { class: "notice undefined" }, h("b", null, "Undefined: "), s.w || "")
      : null;
    const undef = s.u && Object.keys(s.u).length && s.s === "ok" ? h("p", { class: "why" }, "Undefined here: ",
      Object.entries(s.u).map(([n, why]) => (D.labels[n] || n) + " (" + why + ")").join("; ")) : null;
    const left = h("div", null,
      h("section", { class: "card" }, historyNode(s), h("h3", { style: s.hi ? null : "margin-top:0" }, "Question"),
        h("div", { class: "text question" }, s.q === undefined ? "(input texts not in the results)" : s.q),
        h("h3", null, "Response"), s.a ? legend(s) : null, s.a === undefined ? h("p", { class: "muted" }, "(not in the results)")
          : s.a ? responseNode(s) : h("p", { class: "muted" }, "(empty)"),
        h("h3", null, "Response claims · hover or click one"), claimsTable(s),
        h("h3", null, "Reference"), h("div", { class: "text" }, s.r || ""),
        h("h3", null, "Reference claims · covered by the response?"), refClaims(s),
        s.md ? h("details", { class: "md" }, h("summary", null, "metadata"), h("pre", null, JSON.stringify(s.md, null, 1))) : null));
    const right = h("section", { class: "card chunks" }, h("h3", { style: "margin-top:0" }, "Retrieved chunks · " + (s.k || []).length),
      (s.k || []).length ? s.k.map((kk, j) => chunkNode(s, kk, j)) : h("p", { class: "muted" }, "No chunks."));
    root.replaceChildren(...[
      h("div", { class: "nav" }, h("button", { type: "button", onclick: () => { location.hash = "samples"; } }, "← all samples"),
        h("button", { type: "button", disabled: k <= 0, onclick: nav(order[k - 1]) }, "‹ previous"),
        h("button", { type: "button", disabled: k >= order.length - 1, onclick: nav(order[k + 1]) }, "next ›"),
        h("span", { class: "title" }, label(s)), h("span", { class: "status st-" + s.s }, s.s),
        "level" in s ? h("span", { class: "chip" }, "level " + s.level) : null),
      metricChips(s), notice, undef,
      h("div", { class: "grid2" }, left, right), compareBlock(s, pos)].filter(Boolean));
  }
  const sampleRoot = document.getElementById("p-sample");
  sampleRoot.addEventListener("mouseover", (ev) => {
    const el = ev.target.closest("[data-c]");
    if (!el) { hideTip(); return; }
    const ids = idsOf(el);
    showTip(ev, ids);
    if (pinned === null) highlight(ids);
  });
  sampleRoot.addEventListener("mouseout", (ev) => {
    if (ev.target.closest("[data-c]")) { hideTip(); if (pinned === null) highlight([]); }
  });
  sampleRoot.addEventListener("click", (ev) => {
    const el = ev.target.closest(".hl[data-c]");
    if (el) pin(idsOf(el)[0]);
  });

  document.querySelectorAll(".scatter .dot[data-s]").forEach((dot) => {
    dot.addEventListener("click", () => { location.hash = "s=" + dot.getAttribute("data-s"); });
  });
  drawFilters();
  applyFilters();
  route();
  performance.mark("noisegauge-ready");  // read by bench/report_size.py
})();
