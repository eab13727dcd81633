// The printable handout (handout.html): the explainer's state written out as plain HTML, text and
// tables a learner can select, search, translate and print. Computes nothing: every number is the wasm's.
(function () {
  "use strict";
  const main = document.getElementById("handout");
  const statusLine = document.getElementById("handout-status");
  const printButton = document.getElementById("print");
  const params = new URLSearchParams(location.search);

  // Where the numbers come from. First the explainer tab that opened this one, while it still shows
  // the state of this page's address (a model loaded from files exists only there); otherwise the
  // explainer itself, opened at this address in a hidden frame (a reload, a shared link).
  async function openerExplainer() {
    try {
      const app = window.opener && window.opener.attentionExplainer;
      if (!app || typeof app.handoutData !== "function") return null;
      await app.ready;
      return new URL(app.permalink()).search === location.search ? app : null;
    } catch (e) {
      return null;  // another origin, closed, or not ready
    }
  }
  function frameExplainer() {
    return new Promise((resolve, reject) => {
      const frame = document.createElement("iframe");
      frame.className = "no-print";
      frame.title = "the explainer that computes this handout (hidden)";
      frame.setAttribute("aria-hidden", "true");
      frame.tabIndex = -1;
      // Drawn (a frame that is not drawn never becomes ready) but neither seen nor in the way.
      frame.style.cssText = "position:fixed;left:0;top:0;width:640px;height:480px;border:0;opacity:0;pointer-events:none;z-index:-1";
      frame.src = "index.html" + location.search;
      frame.addEventListener("load", () => {
        const app = frame.contentWindow.attentionExplainer;
        if (!app) { reject(new Error("index.html did not start the explainer: is the site complete?")); return; }
        app.ready.then(() => resolve({ app, frame }), reject);
      });
      document.body.appendChild(frame);
    });
  }

  // [Formatting]
  const el = (tag, attrs = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  };
  const MINUS = "−";
  const signed = (text) => text.replace(/^-/, MINUS);
  // Two decimals; tiny non-zero numbers (e^(s − max) of a far key) with two significant digits.
  const number = (v) => v === null ? MINUS + "∞" : signed(Math.abs(v) >= 0.01 || v === 0 ? v.toFixed(2) : v.toPrecision(2));

  // A table with one header row (`columns`) and one row per [label, values, field].
  function rowsTable(columns, rows, attrs = {}) {
    const head = el("tr", {}, el("th", { scope: "col", text: "" }), ...columns.map((c) => el("th", { scope: "col", text: c })));
    const body = rows.map(([label, values, field]) => el("tr", { "data-field": field }, el("th", { scope: "row", text: label }),
      ...values.map((v) => el("td", { text: typeof v === "number" || v === null ? number(v) : String(v) }))));
    return el("div", { class: "scroll" }, el("table", attrs, el("thead", {}, head), el("tbody", {}, ...body)));
  }

  // Whether the mask was applied, read off the scores it hid (not the switch: a decoder always masks).
  function maskText(s) {
    const hidden = (after) => s.scores.some((row, i) => row.some((v, j) => v === null && (after ? j > i : j < i)));
    const text = hidden(true) ? "applied: no token looks at the tokens after it" : "not applied: every token may look at every token";
    return text + (hidden(false) ? "; this layer's sliding window also hides the keys too far back" : "");
  }

  // [Sections]
  function sentenceSection(s) {
    const model = s.model_info || {};
    const modelText = s.model === "handmade" || !s.model ? "the hand-made model (word meanings written by hand, one layer, one head)"
      : `${s.model}${model.family ? ` (${model.family})` : ""}`;
    const facts = [
      ["Sentence", s.sentence],
      ["Query token", `“${s.token_text}”, token ${s.token + 1} of ${s.tokens.length}`],
      ["Model", modelText],
      ["Layer, head", `layer ${s.layer + 1} of ${model.layers || 1}, head ${s.head + 1} of ${model.heads || 1}`],
      ["Key size d", `${s.d}`],
      ["Causal mask", maskText(s)],
      ["Scaling by √d", s.scale ? "on" : "off (the scores are not divided)"],
    ];
    if (s.temperature !== undefined && s.temperature !== 1) facts.push(["Temperature", String(s.temperature)]);
    const asked = params.get("model");
    const note = asked && asked !== s.model
      ? el("p", { class: "error", text: `The model “${asked}” named in this page's address is not loaded here, so this handout ` +
        `shows ${s.model || "the hand-made model"} instead. Open the handout from the explainer once the model is loaded.` }) : null;
    return el("section", { id: "sentence" },
      el("h2", { text: "1. The sentence and the query" }),
      note,
      el("dl", { class: "facts" }, ...facts.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })])),
      el("p", { text: "Its tokens (the query is marked):" }),
      el("ol", { class: "tokens" }, ...s.tokens.map((t, i) => el("li", { class: i === s.token ? "query" : "", text: t }))));
  }

  function weightsSection(s) {
    const head = el("tr", {}, el("th", { scope: "col", text: "query ↓ · key →" }),
      ...s.kv_tokens.map((t) => el("th", { scope: "col", text: t })));
    const rows = s.weights.map((row, i) => el("tr", { class: i === s.token ? "query" : "" },
      el("th", { scope: "row", text: s.tokens[i] }),
      ...row.map((w, j) => {
        if (s.scores[i][j] === null)
          return el("td", { class: "masked", text: "×",
            title: j > i ? "masked: this key comes after the query" : "masked: this key is outside the layer's window" });
        const cell = el("td", { text: w.toFixed(2) });
        cell.style.background = `rgba(40, 110, 200, ${(0.55 * Math.min(Math.max(w, 0), 1)).toFixed(3)})`;
        return cell;
      })));
    const masked = s.scores.some((row) => row.some((v) => v === null));
    return el("section", { id: "weights", class: "page" },
      el("h2", { text: "2. The attention weights" }),
      el("p", { text: "Each row is one token asking (its query); each column is one token offering (its key). " +
        "A row shares out exactly 1 between the keys: the darker the cell, the larger the share. The marked row is the query above." +
        (masked ? " A cell marked × is hidden by the mask (its weight is 0)." : "") }),
      el("div", { class: "scroll" }, el("table", { class: "weights" + (s.kv_tokens.length > 16 ? " wide" : ""), id: "weights-table" },
        el("thead", {}, head), el("tbody", {}, ...rows))));
  }

  // The seven steps: one block each, its title and formula, and the numbers the Steps view shows.
  function stepBlock(step, s, outputDims) {
    const keys = s.kv_tokens;
    const dims = (n) => Array.from({ length: n }, (_, i) => `${i + 1}`);
    const parts = [];
    const keyRows = [
      ["raw_scores", "score q·k"], ["scores", step.step === 6 ? "score after the mask" : step.step === 2 ? "score s" : "scaled score"],
      ["exps", "e^(s − max)"], ["weights", "weight"], ["weights_scaled", "weight, scaled"], ["weights_unscaled", "weight, not scaled"],
    ].filter(([f]) => Array.isArray(step[f])).map(([f, label]) => [label, step[f], f]);
    if (keyRows.length) parts.push(rowsTable(keys, keyRows, { "data-step": String(step.step), class: "keys" }));
    const vectors = [["x", "embedding x"], ["q", "query q"], ["k", "key k"], ["v", "value v"], ["output", "output"]]
      .filter(([f]) => Array.isArray(step[f]));
    for (const [f, label] of vectors) {
      const columns = f === "output" && outputDims && outputDims.length === step[f].length ? outputDims : dims(step[f].length);
      parts.push(rowsTable(columns, [[label, step[f], f]], { "data-step": String(step.step), class: "vector" }));
    }
    const facts = [];
    if (step.score_factor !== undefined) facts.push(["the scores are multiplied by", number(step.score_factor)]);
    if (step.exp_shift !== undefined) facts.push(["max subtracted before e^", number(step.exp_shift)]);
    if (step.sum_of_exps !== undefined) facts.push(["sum of the e^ terms", number(step.sum_of_exps)]);
    if (step.sqrt_d !== undefined) facts.push(["√d", number(step.sqrt_d)]);
    if (step.score_std_raw !== undefined) facts.push(["spread of the scores, not divided", number(step.score_std_raw)]);
    if (step.score_std_scaled !== undefined) facts.push(["spread of the scores, divided by √d", number(step.score_std_scaled)]);
    if (step.shape_A) facts.push(["weights A", `${step.shape_A[0]} × ${step.shape_A[1]}`]);
    if (step.shape_output) facts.push(["output A·V", `${step.shape_output[0]} × ${step.shape_output[1]}`]);
    if (Array.isArray(step.masked_keys)) facts.push(["keys hidden by the mask",
      step.masked_keys.length ? step.masked_keys.map((k) => keys[k]).join(", ") : (step.causal ? "none for this query" : "none (the mask is off)")]);
    if (Array.isArray(step.contributors)) facts.push(["largest shares first",
      step.contributors.filter((c) => c.weight >= 0.005).slice(0, 5).map((c) => `${c.text} ${number(c.weight)}`).join(" · ")]);
    if (facts.length) parts.push(el("dl", { class: "facts" }, ...facts.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })])));
    return el("div", { class: "step", "data-step": String(step.step) },
      el("h3", { text: `Step ${step.step + 1}: ${step.title}` }),
      el("p", { class: "formula", text: step.formula }), ...parts);
  }
  function stepsSection(data) {
    const s = data.state;
    return el("section", { id: "steps", class: "page" },
      el("h2", { text: `3. The seven steps for “${s.token_text}”` }),
      el("p", { text: "The same query followed through every step, with the numbers the Steps view shows " +
        "(rounded here to two decimals; the explainer carries on with the unrounded values)." }),
      // The output's dimensions by name where one step names them (the hand-made model's word classes).
      ...data.steps.map((step) => stepBlock(step, s, (data.steps.find((x) => Array.isArray(x.output_dims)) || {}).output_dims)));
  }

  function exercisesSection(practice) {
    return [
      el("section", { id: "exercises", class: "page" },
        el("h2", { text: "4. Exercises" }),
        el("p", { text: "Try each one on paper first. The answers are on the last page." }),
        el("ol", { class: "exercises" }, ...practice.exercises.map((e) => el("li", {},
          el("strong", { text: e.name }), el("p", { text: e.question }), el("p", { class: "soft", text: `(In the explainer: the ${e.view} view.)` })))),
        el("h3", { text: "Can you do these without notes?" }),
        el("ul", { class: "checklist" }, ...practice.checklist.map((c) => el("li", { class: c.checked ? "done" : "", text: c.text }))),
        el("h3", { text: "Further reading" }),
        el("ul", {}, ...practice.references.map((r) => el("li", {},
          el("a", { href: r.url, class: "print-url", text: r.title }), ` — ${r.source}`)))),
      el("section", { id: "answers", class: "page" },
        el("h2", { text: "Answers" }),
        el("ol", { class: "exercises" }, ...practice.exercises.map((e) => el("li", {},
          el("strong", { text: e.name }), el("p", { class: "answer", text: e.answer }))))),
    ];
  }

  function render(data) {
    const s = data.state;
    const live = new URL("index.html" + location.search, location.href).href;
    document.getElementById("handout-origin").replaceChildren(
      `softmax(QKᵀ/√d)·V for one sentence, as the explainer computed it on ${new Date().toLocaleDateString()}. The live state: `,
      el("a", { href: live, class: "print-url", text: "open it in the explainer" }), ".");
    document.title = `Self-attention handout: “${s.token_text}” in “${s.sentence}”`;
    main.replaceChildren(sentenceSection(s), weightsSection(s), stepsSection(data), ...exercisesSection(data.practice));
  }

  printButton.addEventListener("click", () => window.print());
  /** Resolves with the data the page shows ({state, steps, practice}) once it is written out. */
  const done = (async () => {
    let frame = null;
    let app = await openerExplainer();
    if (!app) ({ app, frame } = await frameExplainer());
    const data = app.handoutData();
    if (frame) frame.remove();  // its numbers are read: free its memory
    render(data);
    statusLine.textContent = "";
    printButton.disabled = false;
    return data;
  })();
  done.catch((e) => {
    statusLine.classList.add("error");
    statusLine.textContent = `The handout could not be made: ${e.message}`;
  });
  window.attentionHandout = { done };
})();
