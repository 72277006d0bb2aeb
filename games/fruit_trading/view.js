// The fruit-trading subgame page: a dialogue tree with σ_CFR beside σ_LLM.
"use strict";
(function () {
  const D = pageData();
  const app = document.getElementById("app");
  app.textContent = "";
  let threshold = 0;

  app.appendChild(header(
    "Fruit trading — variant " + D.variant + ", initialisation " + D.init,
    "model: " + (D.model || "?"),
    D.game + " · " + D.nodes + " messages, " + D.leaves + " leaves"));

  const names = D.tree.names || [];
  const exp = h("table", {class: "summary"},
    h("tr", {}, h("th", {text: "policy"}), ...names.map(n => h("th", {class: "num", text: "E[payoff] " + n}))),
    h("tr", {}, h("td", {text: "σ_CFR (both players follow CFR's average policy)"}), ...D.expected_cfr.map(x => h("td", {class: "num", text: fmt(x)}))),
    h("tr", {}, h("td", {text: "σ_LLM (tone “" + D.baseline + "” at every decision)"}), ...D.expected_llm.map(x => h("td", {class: "num", text: fmt(x)}))));
  app.appendChild(exp);
  if (D.quality && D.quality.length) {
    // The variant's answer quality (summary.json), as the run printed it.
    const q = h("section", {id: "quality"}, h("h2", {text: "Answer quality (all subgames of the variant)"}));
    for (const line of D.quality) q.appendChild(h("div", {class: "small", text: line}));
    app.appendChild(q);
  }
  app.appendChild(h("p", {class: "note", text:
    "Reach: probability of the dialogue so far when both players follow the policy and the LLM seed is uniform. " +
    "At each decision the bars compare σ_CFR (blue) with the σ_LLM baseline (grey)."}));

  const select = h("select", {id: "threshold", "aria-label": "minimum CFR reach"},
    ...[0, 0.001, 0.01, 0.1].map(v => h("option", {value: v, text: v === 0 ? "all branches" : "CFR reach ≥ " + v})));
  select.addEventListener("change", () => { threshold = Number(select.value); applyFilter(); });
  const expand = h("button", {type: "button", id: "expand-all", text: "expand all", onclick: () => setAll(true)});
  const collapse = h("button", {type: "button", id: "collapse-all", text: "collapse all", onclick: () => setAll(false)});
  app.appendChild(h("div", {class: "controls"}, h("label", {}, "show ", select), expand, collapse));

  function toneTag(t) { return h("span", {class: "tag tone-" + t, text: t}); }

  function decisionTable(dec) {
    const t = h("table", {class: "decision"},
      h("tr", {}, h("th", {text: dec.player + " chooses the next tone"}), h("th", {text: "σ_CFR"}), h("th", {text: "σ_LLM"})));
    for (const tone of D.tones) {
      const pc = dec.sigma_cfr ? dec.sigma_cfr[tone] : null;
      const pl = dec.sigma_llm[tone];
      t.appendChild(h("tr", {},
        h("td", {}, toneTag(tone)),
        h("td", {class: "num"}, pc === null || pc === undefined ? h("span", {class: "muted", text: "not in policy file"}) : [bar(pc, "cfr"), fmt(pc)]),
        h("td", {class: "num"}, bar(pl, "llm"), fmt(pl, 0))));
    }
    return t;
  }

  function leafBox(leaf) {
    const rows = [];
    rows.push(h("span", {class: "tag " + (leaf.agreement ? "ok" : ""), text: leaf.agreement ? "trade agreed" + (leaf.agreed_at_message ? " at message " + leaf.agreed_at_message : "") : "no agreement"}));
    rows.push(h("span", {class: "payoffs", text: "payoffs " + names.map((n, i) => n + " " + fmt((leaf.payoffs || [0, 0])[i], 2)).join(", ")}));
    if (leaf.payoffs_exact) rows.push(h("span", {class: "muted small", text: " (exact " + leaf.payoffs_exact.join(", ") + ")"}));
    const box = h("div", {class: "leaf"}, rows);
    if (leaf.trade) box.appendChild(h("div", {class: "small"}, "trade: ", h("span", {class: "trade", text: leaf.trade})));
    if (leaf.guesses && leaf.guesses.length) {
      box.appendChild(h("div", {class: "small muted", text: "guesses: " + leaf.guesses.map(g => g.observer + " after message " + g.message + ": " + (g.guess === null ? "none" : g.guess)).join("; ")}));
    }
    return box;
  }

  let built = 0;
  function nodeView(n) {
    built += 1;
    const head = h("span", {class: "head"},
      h("b", {text: "#" + (n.depth + 1) + " " + n.sender}), " ", toneTag(n.tone),
      h("span", {class: "muted small", text: " seed " + n.seed + " · CFR reach "}), bar(n.reach, "cfr"),
      h("span", {class: "small", text: fmt(n.reach)}),
      h("span", {class: "muted small", text: " · LLM reach " + fmt(n.reach_llm)}));
    const text = h("div", {class: "text msg", text: n.text});
    const wrap = h("div", {class: "node", "data-i": n.depth});
    wrap.reach = n.reach;
    if (!n.children.length) {
      wrap.appendChild(h("div", {class: "card"}, head, text, n.leaf ? leafBox(n.leaf) : null));
      return wrap;
    }
    const d = h("details", {class: "card"}, h("summary", {}, head));
    d.appendChild(text);
    if (n.decision) d.appendChild(decisionTable(n.decision));
    let filled = false;
    const kids = h("div", {class: "kids"});
    d.appendChild(kids);
    d.fill = () => {
      if (filled) return;
      filled = true;
      for (const c of n.children) kids.appendChild(nodeView(c));
      applyFilter(kids);
    };
    d.addEventListener("toggle", () => { if (d.open) d.fill(); });
    if (n.reach >= 0.2 || n.depth === 0) { d.open = true; d.fill(); }
    wrap.appendChild(d);
    return wrap;
  }

  function applyFilter(root = app) {
    for (const el of root.querySelectorAll(".node")) el.hidden = el.reach < threshold;
  }
  function setAll(open) {
    // Opening builds children, which adds more <details>: repeat until none is left closed.
    let changed = true;
    while (changed) {
      changed = false;
      for (const d of app.querySelectorAll("details.card")) {
        if (d.open !== open) { d.open = open; if (open) d.fill(); changed = true; }
      }
      if (!open) break;
    }
    applyFilter();
  }

  const tree = h("section", {id: "tree"});
  app.appendChild(tree);
  tree.appendChild(nodeView(D.tree));
  if (location.hash === "#all") setAll(true);
  ready();
})();
