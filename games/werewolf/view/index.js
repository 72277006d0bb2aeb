// The index page of a Werewolf series or arena folder: win rates and one row per game.
"use strict";
(function () {
  const D = pageData();
  const app = document.getElementById("app");
  app.textContent = "";
  const roles = D.config && D.config.roles ? Object.entries(D.config.roles).filter(([, n]) => n).map(([r, n]) => n + " " + r).join(", ") : "";
  app.appendChild(header("Werewolf " + D.folder_kind + " — " + D.folder, "model: " + (D.model || "?"),
    D.rows.length + " games" + (roles ? " · roles: " + roles : "")));

  if (D.tournament) tournament(D.tournament);  // ratings and the meta-game first

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
  const arena = D.folder_kind === "arena" || D.folder_kind === "tournament";
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

  // A tournament: ratings with their intervals, the meta-game, alpha-Rank, Nash, CFR agents.
  function tournament(T) {
    app.appendChild(h("h2", {text: "Ratings (Bradley–Terry on the Elo scale, 95 % bootstrap intervals)"}));
    const lo = Math.min(...T.ratings.map(r => r.low)), hi = Math.max(...T.ratings.map(r => r.high));
    const span = hi > lo ? hi - lo : 1, RW = 260;
    const px = (v) => 1 + (v - lo) / span * RW;
    const t = h("table", {class: "rates", id: "ratings"}, h("tr", {}, ...["agent", "rating", "interval", "rank", "Elo (game order)", ""].map(x => h("th", {text: x}))));
    for (const r of T.ratings) {
      const svg = s("svg", {width: RW + 2, height: 14, class: "ci"},
        s("line", {x1: px(r.low), x2: px(r.high), y1: 7, y2: 7, stroke: "#111"}),
        s("circle", {cx: px(r.rating), cy: 7, r: 3.5, fill: "#2d5fa8"}));
      t.appendChild(h("tr", {}, h("td", {text: r.agent}), h("td", {class: "num", text: fmt(r.rating, 1)}),
        h("td", {class: "num", text: "[" + fmt(r.low, 1) + ", " + fmt(r.high, 1) + "]"}),
        h("td", {class: "num", text: r.rank_low === r.rank_high ? String(r.rank_low) : r.rank_low + "–" + r.rank_high}),
        h("td", {class: "num", text: fmt(r.elo, 0)}), h("td", {}, svg)));
    }
    app.appendChild(t);
    if (T.inseparable.length) app.appendChild(h("div", {class: "small muted", text: "not separated by the intervals: " + T.inseparable.map(p => p.join(" ~ ")).join("; ")}));
    app.appendChild(h("h2", {text: "Meta-game: mean score of row against column (± standard error)"}));
    const M = T.metagame;
    const mt = h("table", {class: "rates", id: "metagame"}, h("tr", {}, h("th", {text: ""}), ...M.agents.map(a => h("th", {text: a}))));
    M.agents.forEach((a, i) => {
      mt.appendChild(h("tr", {}, h("th", {text: a}), ...M.agents.map((b, j) => {
        const v = M.payoff[i][j], e = M.stderr && M.stderr[i] ? M.stderr[i][j] : null;
        const shade = Math.round(255 - Math.abs(v - 0.5) * 200);
        const bg = v >= 0.5 ? "rgb(" + shade + ",255," + shade + ")" : "rgb(255," + shade + "," + shade + ")";
        return h("td", {class: "num", style: "background:" + bg, text: i === j ? "–" : fmt(v, 2) + (e === null || e === undefined ? "" : " ± " + fmt(e, 2))});
      })));
    });
    app.appendChild(mt);
    const A = T.alpha_rank, N = T.nash;
    app.appendChild(h("h2", {text: "α-Rank (α = " + fmt(A.alpha, 3) + ") and a Nash equilibrium of the meta-game"}));
    const at = h("table", {class: "rates", id: "alpharank"}, h("tr", {}, h("th", {text: "agent"}), h("th", {class: "num", text: "α-Rank mass"}), h("th", {class: "num", text: "Nash probability"})));
    A.agents.forEach((a, i) => at.appendChild(h("tr", {}, h("td", {text: a}), h("td", {class: "num", text: fmt(A.pi[i], 3)}), h("td", {class: "num", text: fmt(N.strategy[N.agents.indexOf(a)], 3)}))));
    app.appendChild(at);
    if (T.cfr.length) {
      app.appendChild(h("h2", {text: "CFR agents"}));
      for (const line of T.cfr) app.appendChild(h("div", {class: "small", text: line}));
    }
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
