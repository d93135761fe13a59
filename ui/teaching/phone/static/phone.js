// The student's phone in class mode: join, follow the lecturer's step, answer, see the reveal.
// It long-polls /join/api/<CODE>/state with If-None-Match and wait=25: the server holds the request until the
// class changes (the lecturer's Next arrives within a fraction of a second) or answers 304 after 25 s. It keeps an
// answer it could not send in localStorage, resending it until the server takes or refuses it: a lost network or
// a restarting server never loses it. Text from the server is HTML it made from markdown with raw HTML escaped.
(() => {
  "use strict";
  const W = JSON.parse(document.getElementById("words").textContent);
  const lang = document.documentElement.lang.startsWith("zh") ? "zh" : "en";
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
  const say = (key, vals = {}) => {
    let s = esc(W[key] || key);
    for (const [k, v] of Object.entries(vals)) s = s.split("{" + k + "}").join(esc(v));
    return s.replace(/\*\*(.+?)\*\*/g, "<b>$1</b>");
  };
  const POLL_MS = 250, WAIT_S = 25, MAX_BACKOFF_MS = 5000;

  const fromPath = (location.pathname.split("/")[2] || "").toUpperCase();
  const fromQuery = (new URLSearchParams(location.search).get("code") || "").toUpperCase();
  let code = (fromPath || fromQuery).replace(/[\s-]/g, "");
  let etag = null, view = null, offlineSince = null, backoff = POLL_MS, timer = null, joined = false, stopped = false;
  const api = (what) => `/join/api/${encodeURIComponent(code)}/${what}?lang=${lang}`;

  // ---- the chrome ----------------------------------------------------------------------------------------------
  const other = lang === "zh" ? "en" : "zh";
  $("lang").textContent = lang === "zh" ? "English" : "中文";  // each language by its own name, in both
  $("lang").href = location.pathname + "?lang=" + other;
  $("join-title").textContent = W["phone.join_title"];
  $("code-label").textContent = W["phone.code_label"];
  $("join-button").textContent = W["phone.join"];
  $("chart-title").textContent = W["phone.chart_title"];
  $("explore").textContent = W["phone.explore"];
  const message = (h) => { $("message").innerHTML = h || ""; };
  const status = (h) => { $("status").innerHTML = h || ""; };

  function showJoin() {
    $("join").hidden = false; $("class").hidden = true; $("title").textContent = "";
    $("code").value = code; $("code").focus();
  }
  $("join-form").addEventListener("submit", (e) => {
    e.preventDefault();
    code = $("code").value.toUpperCase().replace(/[\s-]/g, "");
    history.replaceState(null, "", `/join/${encodeURIComponent(code)}?lang=${lang}`);
    $("lang").href = location.pathname + "?lang=" + other;
    join();
  });

  async function call(url, options = {}) {
    // -> [status, body or null]; status 0: no answer (network, server down)
    try {
      const r = await fetch(url, {credentials: "same-origin", cache: "no-cache", ...options});
      let body = null;
      if (r.status !== 304) { try { body = await r.json(); } catch (e) { body = null; } }
      return [r.status, body, r];
    } catch (e) { return [0, null, null]; }
  }
  const post = (url, data) => call(url, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(data)});

  function offline() {
    offlineSince = offlineSince || Date.now();
    const s = Math.round((Date.now() - offlineSince) / 1000);
    const p = pending();
    status(p ? say("phone.pending", {answer: p.label, s}) : say("phone.offline", {s}));
  }
  function online() { if (offlineSince !== null) { offlineSince = null; status(""); showMine(); } }

  // ---- joining --------------------------------------------------------------------------------------------------
  async function join() {
    if (!/^[A-Z0-9]{6}$/.test(code)) { message(say("class.err.bad_code")); showJoin(); return; }
    $("join-button").disabled = true; $("join-button").textContent = W["phone.joining"];
    const [st, body] = await post(api("join"), {});
    $("join-button").disabled = false; $("join-button").textContent = W["phone.join"];
    if (st === 200) {
      joined = true; message(""); $("join").hidden = true; $("class").hidden = false;
      $("title").textContent = W["phone.in_class"].replace("{code}", code);
      schedule(0); sendPending();
      return;
    }
    if (st === 429) { message(body ? body.message : ""); setTimeout(join, 15000); return; }
    if (st === 0 || st === 503) { offline(); setTimeout(join, 2000); return; }
    message(body && body.message ? body.message : say("class.err.bad_code")); showJoin();
  }

  // ---- following --------------------------------------------------------------------------------------------------
  function schedule(ms) {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(poll, ms);
  }
  async function poll() {
    const headers = etag ? {"If-None-Match": etag} : {};
    const [st, body, r] = await call(api("state") + (etag ? "&wait=" + WAIT_S : ""), {headers});
    if (st === 200 && body) {
      online(); etag = r.headers.get("ETag"); backoff = POLL_MS;
      try { render(body); } catch (e) { console.error(e); }  // a view it cannot draw never stops the following
    } else if (st === 304) {
      online(); backoff = POLL_MS;
    } else if (st === 401 && body && body.rejoin) {
      etag = null; join(); return;
    } else if (st === 404 || st === 410) {
      stopped = true; $("class").hidden = true; message(body ? body.message : ""); return;
    } else {
      offline(); backoff = Math.min(Math.max(backoff, 1000) * 2, MAX_BACKOFF_MS);
    }
    schedule(backoff);
  }

  // ---- answering --------------------------------------------------------------------------------------------------
  const key = () => "explorer.answer." + code;
  const pending = () => { try { return JSON.parse(localStorage.getItem(key()) || "null"); } catch (e) { return null; } };
  const sent = {};  // question -> label this phone sent (until the server's own record comes with a view)

  function pick(question, value, label) {
    localStorage.setItem(key(), JSON.stringify({question, value, label}));
    status(say("phone.sending"));
    markPicked(value);
    sendPending();
  }
  let sending = false;
  async function sendPending() {
    const p = pending();
    if (!p || sending) return;
    sending = true;
    const [st, body] = await post(api("answer"), {question: p.question, value: p.value});
    sending = false;
    const still = pending();
    const same = still && still.question === p.question && still.value === p.value;
    if (st === 200) {
      if (same) localStorage.removeItem(key());
      sent[p.question] = p.label; online();
      if (same) status(say("phone.sent", {answer: p.label}));
      if (!same) sendPending();
    } else if (st === 0 || st === 503 || st === 429) {
      offline(); setTimeout(sendPending, 2000);
    } else if (st === 401 && body && body.rejoin) {
      await join();
    } else {
      if (same) localStorage.removeItem(key());
      status(st === 409 && body && body.error === "class.err.closed" ? say("phone.closed_late") : (body ? body.message : ""));
    }
  }
  function markPicked(value) {
    for (const b of $("options").querySelectorAll("button[data-value]")) b.classList.toggle("picked", Number(b.dataset.value) === value);
  }
  function showMine() {
    if (!view || !view.question || view.revealed) return;
    const q = view.question.id, p = pending();
    const label = p && p.question === q ? null : sent[q] || (view.mine && view.mine.label);
    if (p && p.question === q) { status(say("phone.sending")); markPicked(p.value); }
    else if (label) { status(say("phone.sent", {answer: label})); if (view.mine && view.mine.value !== null) markPicked(view.mine.value); }
  }

  // ---- drawing a view ---------------------------------------------------------------------------------------------
  function render(v) {
    const changed = !view || view.step_seq !== v.step_seq || (view.question || {}).id !== (v.question || {}).id;
    view = v;
    if (v.ended) {
      stopped = true; $("class").hidden = true; message(""); $("join").hidden = true;
      $("status").textContent = ""; $("message").innerHTML = "<p>" + esc(W["phone.ended"]) + "</p>"; return;
    }
    $("progress").textContent = v.progress || "";
    $("text").innerHTML = v.text || "";
    const q = v.question;
    $("question").innerHTML = q ? q.prompt : (v.kind ? "" : "<p class='muted'>" + esc(W["phone.waiting"]) + "</p>");
    $("options").innerHTML = ""; $("reveal").innerHTML = "";
    if (changed) status("");
    if (q && !v.revealed) drawOptions(q);
    else if (q && v.revealed) drawReveal(v);
    else if (v.kind === "lesson") $("options").innerHTML = "<p class='muted'>" + esc(W["phone.no_question"]) + "</p>";
    $("explore-line").hidden = !v.explore;
    if (v.explore) $("explore").href = v.explore;
    drawChart(v);
    showMine();
  }
  function drawOptions(q) {
    const box = $("options");
    if (q.kind === "choice") {
      q.options.forEach((label, i) => {
        const b = document.createElement("button");
        b.type = "button"; b.dataset.value = String(i);
        b.innerHTML = "<b>" + String.fromCharCode(65 + i) + "</b> " + esc(label);
        b.addEventListener("click", () => pick(q.id, i, label));
        box.appendChild(b);
      });
    } else if (q.kind === "estimate") {
      const form = document.createElement("form");
      form.innerHTML = `<label>${say("phone.estimate_label", {within: q.within})}<input inputmode="decimal" name="v"></label>` +
        `<button class="primary" type="submit">${esc(W["phone.send"])}</button>`;
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        const raw = form.v.value.trim().replace(",", ".");
        const n = Number(raw);
        if (!raw || !Number.isFinite(n)) { status(esc(W["phone.not_number"])); return; }
        pick(q.id, n, String(n));
      });
      box.appendChild(form);
    } else {
      box.innerHTML = "<p class='muted'>" + esc(W["phone.key_elsewhere"]) + "</p>";
    }
  }
  function drawReveal(v) {
    const out = [], mine = v.mine || {};
    if (v.answer !== undefined) {
      const kind = mine.value === null || mine.value === undefined ? "none" : mine.right ? "right" : "wrong";
      const line = kind === "none" ? say("class.reveal_none", {answer: v.answer})
        : kind === "right" ? say("class.reveal_right", {answer: v.answer})
        : say("class.reveal_wrong", {answer: v.answer, mine: mine.label});
      out.push(`<div class="verdict ${kind}">${line}</div>`);
    } else if (mine.label) {
      out.push(`<div class="verdict none">${say("class.poll_result_mine", {mine: mine.label})}</div>`);
    }
    if (v.explanation) out.push(`<div>${v.explanation}</div>`);
    if (v.distribution) {
      const most = Math.max(1, ...v.distribution.map((r) => r.students));
      out.push(`<h2>${esc(W["phone.dist_title"])}</h2>`);
      for (const r of v.distribution) {
        out.push(`<div class="bar ${r.right ? "right" : ""}"><div class="label"><span>${esc(r.answer)}${r.right ? " ✓" : ""}</span>` +
          `<span>${r.students}</span></div><div class="track"><div class="fill" style="width:${(100 * r.students / most).toFixed(1)}%"></div></div></div>`);
      }
      if (v.sentence) out.push(`<div class="muted">${v.sentence}</div>`);
    }
    $("reveal").innerHTML = out.join("");
    status("");
  }

  // ---- the lecturer's figure on a phone's width: titles in lines, subplot titles within their column ----------
  const CJK = /[\u2e80-\uffef]/;
  const textWidth = (text, px) => [...text].reduce((w, ch) => w + (CJK.test(ch) ? px : 0.55 * px), 0);
  function wrapText(text, px, width) {
    // break after spaces (Chinese anywhere) into lines no wider than width; Plotly never wraps a title
    const lines = []; let line = "";
    for (const word of String(text).replace(/<br>/g, " ").split(/(?<= )/)) {
      for (const piece of (textWidth(word, px) > width || CJK.test(word)) ? [...word] : [word]) {
        if (line && textWidth(line + piece, px) > width) { lines.push(line.trimEnd()); line = ""; }
        line += piece;
      }
    }
    lines.push(line.trimEnd());
    return lines;
  }
  function fitToPhone(src, width, data) {
    const M = {l: 48, r: 12, b: 48}, TITLE_PX = 15, NOTE_PX = 12;
    const plotW = width - M.l - M.r;
    const title = (src.title && src.title.text) || "";
    const lines = title ? wrapText(title, TITLE_PX, width - 16) : [];
    // subplot titles (annotations above a column): within the column's share of the plot's width
    const notes = (src.annotations || []).map((a) => ({...a}));
    const perRow = {};
    for (const a of notes) if (a.text && a.yref === "paper") perRow[a.y] = (perRow[a.y] || 0) + 1;
    let noteLines = 1;
    for (const a of notes) {
      if (!a.text || a.yref !== "paper") continue;
      const px = Math.min((a.font && a.font.size) || NOTE_PX, NOTE_PX);
      const parts = wrapText(a.text, px, plotW / (perRow[a.y] || 1) - 8);
      a.text = parts.join("<br>"); a.font = {...(a.font || {}), size: px};
      noteLines = Math.max(noteLines, parts.length);
    }
    // the legend in rows of its own above the plot (inside it, it would cover the lines on a narrow plot)
    const named = (data || []).filter((tr) => tr.name && tr.showlegend !== false).length;
    const legendRows = src.showlegend === false || named < 2 ? 0 : named;
    const legendPx = legendRows * 20;
    const titlePx = Math.round(lines.length * TITLE_PX * 1.35);
    const notesPx = notes.length ? Math.round((noteLines - 1) * NOTE_PX * 1.3) : 0;
    const top = 12 + titlePx + legendPx + notesPx + (notes.length ? 18 : 0);
    return {...src, autosize: true, width: undefined, height: Math.min(src.height || 420, 460) + top - 56,
            margin: {...M, t: top}, font: {...(src.font || {}), size: 13}, annotations: notes,
            legend: {...(src.legend || {}), orientation: "h", x: 0, xanchor: "left", y: 1, yanchor: "bottom",
                     yref: "paper", font: {size: 12}, bgcolor: "rgba(0,0,0,0)"},
            title: {...(src.title || {}), text: lines.join("<br>"), font: {...((src.title || {}).font || {}), size: TITLE_PX},
                    x: 0, xanchor: "left", xref: "container", y: 1, yanchor: "top", yref: "container",
                    pad: {t: 8 + Math.round(TITLE_PX * 0.35 * lines.length), l: 4}}};
  }

  let plotlyLoading = null, drawnChart = null;
  function loadPlotly() {
    if (window.Plotly) return Promise.resolve();
    if (!plotlyLoading) plotlyLoading = new Promise((ok, fail) => {
      const s = document.createElement("script"); s.src = window.PLOTLY_URL; s.onload = ok; s.onerror = fail;
      document.head.appendChild(s);
    });
    return plotlyLoading;
  }
  async function drawChart(v) {
    const q = v.question;
    const want = v.revealed && q && v.kind === "lesson";
    $("chart-box").hidden = !want;
    if (!want) { drawnChart = null; $("chart").innerHTML = ""; return; }
    if (!v.chart) { $("chart-note").textContent = W["phone.chart_waits"]; return; }
    if (drawnChart === q.id) return;
    $("chart-note").textContent = W["phone.chart_loading"];
    const [st, fig] = await call(`/join/api/${encodeURIComponent(code)}/figure/${encodeURIComponent(q.id)}`);
    if (st !== 200 || !fig) return;
    try { await loadPlotly(); } catch (e) { return; }
    const layout = fitToPhone(fig.layout, $("chart").clientWidth || 358, fig.data);
    $("chart").innerHTML = "";
    await window.Plotly.newPlot($("chart"), fig.data, layout, {displayModeBar: false, responsive: true});
    $("chart-note").textContent = ""; drawnChart = q.id;
  }

  // ---- start ------------------------------------------------------------------------------------------------------
  if (code) join(); else showJoin();
})();
