// The open view's numbers as real HTML for screen readers: the weight matrix as a table with token
// headers, the library shelf as a list, the current step's formula with its numbers, where the token
// looks in the chosen head, the other views' figures as a list. Visually hidden
// (the canvas draws the same); rebuilt from getState() a moment after each change. And Tab moves the
// focus, as on any page. Computes nothing.
(function () {
  "use strict";
  const api = window.attentionExplainer;
  const box = document.getElementById("view-numbers");
  if (!api || !box) return;

  const TITLES = { flow: "Flow", weights: "Weights", heads: "Heads", library: "Library", steps: "Steps",
    derive: "Derive", break: "Break", mistakes: "Mistakes", build: "Build", cost: "Cost", practice: "Practice", train: "Train", compare: "Compare" };
  const number = (v, digits = 2) => (v === null || v === undefined ? "masked" : Number(v).toFixed(digits));
  const figure = (v) => (Number.isInteger(v) ? String(v) : number(v, 3));  // counts stay whole
  const vector = (values) => "[" + values.map((v) => number(v)).join(", ") + "]";

  function element(tag, text, attributes = {}) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, v);
    return e;
  }

  // rows × columns of numbers with a header cell per column and per row; null cells read "masked".
  function matrixTable(caption, rowNames, columnNames, values, digits = 2) {
    const table = element("table");
    table.appendChild(element("caption", caption));
    const head = table.appendChild(element("thead")).appendChild(element("tr"));
    head.appendChild(element("td"));
    for (const name of columnNames) head.appendChild(element("th", name, { scope: "col" }));
    const body = table.appendChild(element("tbody"));
    values.forEach((row, i) => {
      const tr = body.appendChild(element("tr"));
      tr.appendChild(element("th", rowNames[i], { scope: "row" }));
      row.forEach((v) => tr.appendChild(element("td", number(v, digits))));
    });
    return table;
  }

  function weightTable(s) {
    // masked cells are the ones whose score is -∞ (null in the state)
    const shown = s.weights.map((row, i) => row.map((w, j) => (s.scores[i][j] === null ? null : w)));
    return matrixTable(`Attention weights: one row per query token, one column per key token; each row sums to 1` +
      (s.causal ? "; masked cells are future tokens hidden by the causal mask" : ""), s.tokens, s.kv_tokens, shown);
  }

  function libraryList(s) {
    const d = s.view_data;
    const parts = [element("p", `The reader is "${s.tokens[d.reader]}". Each book on the shelf is a key token; ` +
      `its share is how much of that book the reader takes home.`)];
    const list = element("ol", undefined, { "aria-label": "The shelf" });
    s.kv_tokens.forEach((title, j) => {
      list.appendChild(element("li", `${title}: ${Math.round(100 * d.read[j])}% read` + (j === d.best ? " (the best match)" : "")));
    });
    parts.push(list);
    return parts;
  }

  function stepParts(s) {
    const d = s.view_data;
    const parts = [element("p", `Step ${d.step + 1} of 7: ${d.title}.`), element("p", `Formula: ${d.formula}`)];
    const list = element("ul", undefined, { "aria-label": `The numbers of "${d.token_text}"` });
    for (const key of ["x", "q", "k", "v"]) if (Array.isArray(d[key])) list.appendChild(element("li", `${key} = ${vector(d[key])}`));
    parts.push(list);
    return parts;
  }

  function deriveParts(s) {
    const d = s.view_data, names = ["token 1", "token 2", "token 3"];
    return [matrixTable("Raw scores Q·Kᵀ", names, names, d.raw_scores),
      matrixTable("Scores divided by √2", names, names, d.scaled_scores),
      matrixTable("Weights after the softmax", names, names, d.weights),
      matrixTable("Output: weighted sums of the values", names, ["output 1", "output 2"], d.output)];
  }

  // The numbers every other view shows, as "name: value" lines (scalars and short lists only).
  function plainFacts(data, prefix = "") {
    const list = element("ul");
    for (const [key, value] of Object.entries(data || {})) {
      if (key === "interventions" || key === "next_strip" || key === "ask") continue;  // their own lists (interventionParts, predictionParts, askParts)
      const name = prefix + key.replace(/_/g, " ");
      if (typeof value === "number") list.appendChild(element("li", `${name}: ${figure(value)}`));
      else if (typeof value === "string" || typeof value === "boolean") list.appendChild(element("li", `${name}: ${value}`));
      else if (Array.isArray(value) && value.length && value.length <= 16 && value.every((v) => typeof v === "number"))
        list.appendChild(element("li", `${name}: ${vector(value)}`));
      else if (value && typeof value === "object" && !Array.isArray(value)) {
        const inner = plainFacts(value, name + ", ");
        if (inner.childElementCount) list.append(...inner.children);
      }
    }
    return list;
  }

  function headParts(s) {
    const d = s.view_data;
    const list = element("ol", undefined, { "aria-label": `Where "${s.token_text}" looks in layer ${d.chosen.layer + 1}, head ${d.chosen.head + 1}` });
    for (const t of d.top_weights) list.appendChild(element("li", `${t.token}: ${number(t.weight)}`));
    const summary = d.summaries[d.chosen.layer][d.chosen.head];
    return [element("p", `Layers: ${d.layers}, heads per layer: ${d.heads}. The chosen head's pattern: ${summary.label}.` +
      (summary.reading ? ` ${summary.reading}` : "")), list,
      ...(d.sweep && d.sweep.text ? [element("p", `Each head switched off: ${d.sweep.text}`)] : []),
      ...(d.attribution ? [matrixTable(`What each head adds to the logit of ${d.attribution.target.token}`,
        d.attribution.heads.map((_, l) => `layer ${l + 1}`), d.attribution.heads[0].map((_, h) => `head ${h + 1}`), d.attribution.heads, 3),
      element("p", d.attribution.text)] : []),
      ...(d.attribution_note ? [element("p", d.attribution_note)] : []),
      ...familyParts(d.family, s)];
  }

  // What the model's family adds to the chosen head: shared K/V heads, local and global layers, positions,
  // the window, the soft-cap and the q/k norm, as the Heads view draws them.
  function familyParts(f, s) {
    if (!f) return [];
    const parts = [];
    if (f.groups) parts.push(element("p", f.groups.text));
    if (f.layer_kinds && f.layer_kinds.some((l) => l.kind === "local")) {
      const list = element("ol", undefined, { "aria-label": "Layers, local or global" });
      for (const l of f.layer_kinds) list.appendChild(element("li", l.kind === "local" ? `local, sees the last ${l.window} tokens` : "global, sees the whole text"));
      parts.push(list);
    }
    const p = f.positions || {};
    parts.push(element("h3", "Positions"));
    if (p.kind === "rope") {
      parts.push(element("p", `${p.text} The chosen head's q of "${s.tokens[p.query_token]}" and k of "${s.tokens[p.key_token]}", ` +
        `rotated as if d positions apart:`));
      parts.push(matrixTable("Score by distance d", ["score"], p.by_distance.map((_, d) => `d = ${d}`), [p.by_distance], 3));
      parts.push(element("p", `Their real distance is ${p.distance}: score ${number(p.by_distance[p.distance], 3)}.`));
    } else parts.push(element("p", p.text || "No positions."));
    if (f.window > 0) parts.push(element("p", `This layer sees the last ${f.window} tokens: its mask is a band of width ${f.window} along the diagonal.`));
    if (f.softcap) {
      parts.push(element("h3", "Soft-capping"));
      const names = s.kv_tokens || s.tokens;
      parts.push(matrixTable(`Scores of "${s.token_text}" before and after tanh(s / ${f.softcap.cap}) · ${f.softcap.cap}`, ["scaled", "capped"],
        names, [f.softcap.scaled_row, f.softcap.capped_row], 3));
    }
    if (f.qk_norm) {
      const q = f.qk_norm;
      parts.push(element("h3", "Q/K norm"));
      parts.push(element("p", `Root mean square of the q of "${s.token_text}": ${number(q.q_rms_before)} before the norm, ${number(q.q_rms_after)} after; ` +
        `of its k: ${number(q.k_rms_before)} before, ${number(q.k_rms_after)} after.`));
    }
    return parts;
  }

  // A loaded model's predictions as the strip shows them: a decoder's next token, an encoder's words for
  // its mask token (or, with no mask typed, how to ask).
  function predictionParts(s) {
    const strip = s.view_data.next_strip;
    if (!strip) return [];
    if (!strip.title) return [element("p", strip.prompt)];
    const top = s.masked && s.masked.length ? s.masked[0].top : s.next || [];
    const list = element("ol", undefined, { "aria-label": strip.title });
    for (const t of top) list.appendChild(element("li", `${t.token}: ${number(t.p, 3)}`));
    const parts = [element("h3", strip.title), list, element("p", strip.note),
      ...(strip.trained_here ? [element("p", strip.trained_here)] : []), ...(strip.write ? [element("p", strip.write)] : [])];
    if (strip.writes) {  // the strip's click: write a token at the end of the text
      const buttons = element("ul", undefined, { "aria-label": "Write with the model" });
      for (const t of top) {
        const button = element("button", `Write ${t.token}`, { type: "button" });
        button.addEventListener("click", () => { try { api.writeToken(t.id); } catch (e) { console.warn(e.message); } });
        buttons.appendChild(element("li")).appendChild(button);
      }
      parts.push(buttons);
    }
    return parts;
  }

  // The model asked about two sentences (Compare's pair, Train's probe and its twin): what it answers, each
  // head's share of the answer and each head switched off, in the view's words.
  function askParts(ask) {
    const lines = ask ? ask.lines || [ask.text] : [];
    if (!lines.length) return [];
    const list = element("ul", undefined, { "aria-label": "The model asked" });
    for (const line of lines) list.appendChild(element("li", line));
    return [element("h3", "Ask the model, not its weights"), list];
  }

  // The learner's changes inside the model (switched-off heads, cut links, a patch) and what they did.
  function interventionParts(d) {
    if (!d) return [];
    const list = element("ul", undefined, { "aria-label": "Your changes inside the model" });
    for (const text of d.entries) list.appendChild(element("li", text));
    return [element("h3", "Your changes inside the model"), list,
      ...[d.effect, d.restored, d.note].filter(Boolean).map((text) => element("p", text))];
  }

  function render() {
    const s = api.getState();
    const parts = [element("h2", `${TITLES[s.view] || s.view} view, in numbers`)];
    if (s.view === "flow" || s.view === "weights" || s.view === "mistakes") parts.push(weightTable(s));
    if (s.view === "mistakes" && s.view_data.own_factor) parts.push(element("p", s.view_data.own_factor));
    if (s.view === "weights" && s.view_data.sink) parts.push(element("p", s.view_data.sink));
    if (s.view === "weights" && s.view_data.both_ways) parts.push(element("p", s.view_data.both_ways));
    const reading = s.view === "weights" && s.view_data.reading;
    if (reading) parts.push(matrixTable(reading.kind === "rollout" ? "Rollout: the share of each key token in each query's stream"
      : "Value-weighted: each weight times the length of what its key sends", s.tokens, s.kv_tokens, reading.values, 3),
    element("p", reading.text));
    const around = s.view === "flow" && s.view_data.around;
    if (around) parts.push(element("p", `Around this head at "${s.tokens[around.token]}": the stream entering the layer ` +
      `has length ${number(around.stream_in)}, the attention adds ${number(around.attention_update)}, the MLP adds ` +
      `${number(around.mlp_update)}, the stream leaving has length ${number(around.stream_out)}. ${around.text}`));
    if (s.view === "library") parts.push(...libraryList(s));
    else if (s.view === "steps") parts.push(...stepParts(s));
    else if (s.view === "derive") parts.push(...deriveParts(s));
    else if (s.view === "heads") parts.push(...headParts(s));
    else if (s.view !== "flow" && s.view !== "weights") parts.push(plainFacts(s.view_data));
    parts.push(...askParts(s.view === "train" ? s.view_data.probe && s.view_data.probe.ask : s.view_data.ask));
    parts.push(...predictionParts(s));
    const run = s.model_run;  // where the model's forward runs, and whether the views wait for a newer text
    if (run && run.pending) parts.push(element("p", "Updating: the views show the last complete text while the model reads the new one."));
    if (run && (run.error || run.note)) parts.push(element("p", run.error || run.note));
    parts.push(...interventionParts(s.view_data.interventions));
    box.replaceChildren(...parts);
  }

  // Tab belongs to the page: Emscripten's GLFW swallows it on window (preventDefault), which would trap
  // keyboard users on the canvas, and inside a course page's iframe. The app's arrows, Space, Enter
  // and [ ] are untouched.
  for (const type of ["keydown", "keyup"])
    window.addEventListener(type, (e) => { if (e.key === "Tab") e.stopImmediatePropagation(); }, true);

  // A slider drag changes the state every frame: the structure follows once the change rests.
  let timer = 0;
  window.addEventListener("attention-explainer-change", () => {
    clearTimeout(timer);
    timer = setTimeout(() => { try { render(); } catch (e) { console.warn("attention explainer: view numbers", e); } }, 150);
  });
})();
