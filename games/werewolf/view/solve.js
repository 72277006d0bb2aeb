// The Werewolf day-study page: per day, CFR's probabilities over tone × act per opponent model.
"use strict";
(function () {
  const D = pageData();
  const app = document.getElementById("app");
  app.textContent = "";
  const S = D.settings || {};
  const models = [...new Set(D.days.map(d => d.opponent_model))];
  const seeds = [...new Set(D.days.map(d => d.game_seed))];
  app.appendChild(header("Werewolf day study — " + D.folder, "model: " + (D.model || "?"),
    seeds.length + " days (day " + S.day + " of each scripted game, " + S.speakers + " speakers), listeners' models: " +
    models.join(", ") + "; CFR " + S.iterations + " iterations; baseline: " + (D.baseline || "?") + ". Seats are numbered from 0 (P0 …) as in days.csv."));

  const byKey = {};
  for (const d of D.days) byKey[d.opponent_model + "/" + d.game_seed] = d;
  let current = seeds[0];

  // The days, one row each; click one to see its decisions.
  const table = h("table", {class: "days", id: "days"});
  table.appendChild(h("tr", {}, h("th", {text: "game seed"}), h("th", {text: "speakers"}),
    models.map(m => h("th", {class: "num", title: "p: CFR-Gain's label-permutation p-value (docs: Above noise?)",
      text: m + " NashConv / CFR-Gain (p)"}))));
  const rows = {};
  for (const seed of seeds) {
    const any = models.map(m => byKey[m + "/" + seed]).find(Boolean);
    const tr = h("tr", {class: "day-row", onclick: () => show(seed)},
      h("td", {text: String(seed)}),
      h("td", {text: any.speakers.map(p => "P" + p).join(", ") + " · a werewolf speaks in " + Math.round(100 * any.werewolf_speaker_share) + " % of " + any.deals.kept + " deals"}),
      models.map(m => { const d = byKey[m + "/" + seed]; const x = d ? d.metrics : {};
        const p = x.cfr_gain_p_value == null ? "" : " (p " + fmt(x.cfr_gain_p_value, 3) + ")";
        return h("td", {class: "num", text: d ? fmt(x.nash_conv, 3) + " / " + fmt(x.cfr_gain, 3) + p : "–"}); }));
    rows[seed] = tr;
    table.appendChild(tr);
  }
  app.appendChild(h("h2", {text: "Days"}));
  app.appendChild(table);
  const dayBox = h("section", {id: "day"});
  app.appendChild(dayBox);

  function grid(dec) {
    const t = h("table", {class: "grid"});
    t.appendChild(h("tr", {}, h("th", {text: "tone \\ act"}), D.acts.map(a => h("th", {class: "num", title: dec.acts[a] || "not legal here", text: a}))));
    D.tones.forEach((tone, i) => {
      t.appendChild(h("tr", {}, h("th", {text: tone}), D.acts.map((a, j) => {
        // A missing entry (a ragged row) shows as not legal rather than stopping the page.
        const row = dec.probs[i] || [];
        const p = row[j] === undefined ? null : row[j];
        return h("td", {class: "num prob" + (p === null ? " illegal" : ""), title: tone + " · " + (dec.acts[a] || a) + ": " + (p === null ? "not legal" : fmt(p, 3)),
          style: p === null ? "" : "background: rgba(45,95,168," + Math.min(1, p).toFixed(3) + "); color:" + (p > 0.5 ? "#fff" : "#111"),
          text: p === null ? "–" : (p < 0.005 ? "<.01" : p.toFixed(2))});
      })));
    });
    return t;
  }
  function card(dec) {
    return h("div", {class: "decision-card"},
      h("div", {}, h("b", {text: "P" + dec.speaker}), " ", h("span", {class: "tag " + (dec.role === "werewolf" ? "wolf" : "village"), text: dec.role}),
        h("span", {class: "small muted", text: " deal " + dec.deal + " · turn " + (dec.turn + 1) + " · CFR reach " + fmt(dec.reach, 4)})),
      dec.history.map(st => h("div", {class: "text small"}, h("b", {text: "P" + st.speaker + " "}), h("span", {class: "tag tone-" + st.tone, text: st.tone}), st.act + ": ", st.text)),
      grid(dec),
      h("div", {class: "small muted", text: Object.entries(dec.acts).map(([k, v]) => k + " = " + v).join(" · ")}));
  }
  function show(seed) {
    current = seed;
    for (const [s2, tr] of Object.entries(rows)) tr.classList.toggle("chosen", String(s2) === String(seed));
    dayBox.textContent = "";
    const any = models.map(m => byKey[m + "/" + seed]).find(Boolean);
    dayBox.appendChild(h("h2", {text: "Day " + any.day + " of game seed " + seed}));
    dayBox.appendChild(h("p", {class: "small", text: any.deals.kept + " of " + any.deals.consistent + " deals consistent with the public history (" + (any.deals.enumerated ? "all of them" : "drawn") + "); dead: " + any.alive.map((a, p) => a ? null : "P" + p).filter(Boolean).join(", ")}));
    any.deals.roles.forEach((roles, k) => dayBox.appendChild(h("p", {class: "small muted", text: "deal " + k + ": " + roles.map((r, p) => "P" + p + " " + r).join(", ")})));
    const cols = h("div", {class: "models"});
    for (const m of models) {
      const d = byKey[m + "/" + seed];
      const col = h("div", {class: "model-col", "data-kind": m}, h("h3", {text: "listeners: " + m}));
      if (!d) { col.appendChild(h("p", {class: "muted", text: "not solved"})); cols.appendChild(col); continue; }
      const ranked = d.decisions.slice().sort((a, b) => (a.turn - b.turn) || (b.reach - a.reach));
      const top = ranked.filter((x, i) => i < 4);
      const rest = ranked.slice(4);
      for (const dec of top) col.appendChild(card(dec));
      if (rest.length) col.appendChild(lazyDetails(rest.length + " more decision points (lower reach)", () => h("div", {}, rest.map(card)), "more"));
      cols.appendChild(col);
    }
    dayBox.appendChild(cols);
  }
  show(current);
  ready();
})();
