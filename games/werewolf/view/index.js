// The index page of a Werewolf series or arena folder: win rates and one row per game.
"use strict";
(function () {
  const D = pageData();
  const app = document.getElementById("app");
  app.textContent = "";
  const roles = D.config && D.config.roles ? Object.entries(D.config.roles).filter(([, n]) => n).map(([r, n]) => n + " " + r).join(", ") : "";
  app.appendChild(header("Werewolf " + D.folder_kind + " — " + D.folder, "model: " + (D.model || "?"),
    D.rows.length + " games" + (roles ? " · roles: " + roles : "")));

  // Win rates with their 95 % intervals: a bar for the rate and a whisker for the interval.
  app.appendChild(h("h2", {text: "Win rates (95 % Wilson intervals)"}));
  const W = 220;
  const rates = h("table", {class: "rates"}, h("tr", {}, h("th", {text: ""}), h("th", {class: "num", text: "wins / games"}), h("th", {class: "num", text: "rate"}), h("th", {text: "95 % interval"}), h("th", {text: ""})));
  for (const r of D.rates) {
    const x = (v) => (v === null || v === undefined ? 0 : v) * W;
    const svg = s("svg", {width: W + 2, height: 14, class: "ci"},
      s("rect", {x: 1, y: 3, width: W, height: 8, fill: "#eef1f4"}),
      s("rect", {x: 1, y: 3, width: x(r.rate), height: 8, fill: "#2d5fa8", opacity: 0.7}),
      s("line", {x1: 1 + x(r.lo), x2: 1 + x(r.hi), y1: 7, y2: 7, stroke: "#111", "stroke-width": 1}),
      s("line", {x1: 1 + x(r.lo), x2: 1 + x(r.lo), y1: 2, y2: 12, stroke: "#111"}),
      s("line", {x1: 1 + x(r.hi), x2: 1 + x(r.hi), y1: 2, y2: 12, stroke: "#111"}));
    rates.appendChild(h("tr", {class: "rate"}, h("td", {text: r.what}), h("td", {class: "num", text: (r.wins ?? "–") + " / " + (r.games ?? "–")}),
      h("td", {class: "num", text: fmt(r.rate, 3)}), h("td", {class: "num", text: "[" + fmt(r.lo, 3) + ", " + fmt(r.hi, 3) + "]"}), h("td", {}, svg)));
  }
  app.appendChild(rates);

  // One row per game, sortable by any column, filterable by winner.
  const arena = D.folder_kind === "arena";
  const cols = [["seed", "seed"], ...(arena ? [["wolf_model", "werewolves"], ["village_model", "village"], ["winning_model", "winning model"]] : []),
    ["winner", "winner"], ["rounds", "rounds"], ["steps", "steps"], ["statements", "statements"], ["votes", "votes"], ["deaths", "night deaths"],
    ["exiles", "exiles"], ["calls", "model calls"], ["fallbacks", "fallbacks"], ["defaulted", "defaulted"]];
  const numeric = new Set(["seed", "rounds", "steps", "statements", "votes", "deaths", "exiles", "calls", "fallbacks", "defaulted"]);
  const winners = [...new Set(D.rows.map(r => r.winner ?? "unfinished"))];
  const filter = h("select", {id: "winner-filter", "aria-label": "winner"}, h("option", {value: "", text: "all winners"}), winners.map(w => h("option", {value: w, text: w})));
  const count = h("span", {class: "muted small", id: "shown"});
  app.appendChild(h("h2", {text: "Games"}));
  app.appendChild(h("div", {class: "controls"}, h("label", {}, "show ", filter), count, h("span", {class: "muted small", text: "click a column to sort"})));
  const table = h("table", {class: "games", id: "games"});
  const head = h("tr", {});
  let sortKey = "seed", sortDir = 1;
  for (const [k, label] of cols) {
    head.appendChild(h("th", {class: numeric.has(k) ? "num sortable" : "sortable", text: label, onclick: () => { sortDir = sortKey === k ? -sortDir : 1; sortKey = k; draw(); }}));
  }
  head.appendChild(h("th", {text: "page"}));
  const body = h("tbody", {});
  table.appendChild(h("thead", {}, head));
  table.appendChild(body);
  app.appendChild(table);
  if (D.quality && D.quality.length) {
    app.appendChild(h("h2", {text: "Answer quality"}));
    for (const line of D.quality) app.appendChild(h("div", {class: "small", text: line}));
  }
  if (D.skipped.length) {
    app.appendChild(h("h3", {text: "Logs not shown"}));
    for (const sk of D.skipped) app.appendChild(h("div", {class: "small muted", text: sk.log + ": " + sk.reason}));
  }

  function draw() {
    const want = filter.value;
    const rows = D.rows.filter(r => !want || (r.winner ?? "unfinished") === want);
    rows.sort((a, b) => {
      const x = a[sortKey], y = b[sortKey];
      if (x === y) return 0;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * sortDir;
    });
    body.textContent = "";
    for (const r of rows) {
      const tr = h("tr", {class: "game-row"});
      for (const [k] of cols) {
        const v = r[k];
        tr.appendChild(h("td", {class: numeric.has(k) ? "num" : "", text: k === "winner" ? (v ?? "unfinished") : (v ?? "–")}));
      }
      tr.appendChild(h("td", {}, r.link ? h("a", {href: r.link, title: r.log, text: "open"}) : h("span", {class: "muted", text: r.log})));
      body.appendChild(tr);
    }
    count.textContent = rows.length + " of " + D.rows.length + " games";
  }
  filter.addEventListener("change", draw);
  draw();
  ready();
})();
