// The Werewolf game page: a timeline of nights and days beside the seats' minds at a step.
"use strict";
(function () {
  const D = pageData();
  const app = document.getElementById("app");
  app.textContent = "";
  const N = D.num_players;
  const P = (p) => (p === null || p === undefined || p < 0) ? "nobody" : "Player " + (Number(p) + 1);
  const WOLF = "werewolf";
  const team = (r) => r === WOLF ? "wolf" : "village";
  const B = D.beliefs || {models: {}, changes: []};

  // ---- header and roster -------------------------------------------------------------
  const res = D.result;
  const title = "Werewolf — seed " + D.seed + (res ? " · " + res.winner + " win after " + res.rounds + " round(s)" : " · unfinished game");
  const roleCounts = Object.entries((D.config || {}).roles || {}).filter(([, n]) => n).map(([r, n]) => n + " " + r).join(", ");
  app.appendChild(header(title, "model: " + (D.model || "?"),
    N + " players (" + roleCounts + "); seats are numbered from 1 as the players call them" +
    (D.arena ? " · arena: werewolves " + D.arena.wolf_model + ", village " + D.arena.leader_model : "")));

  const reveal = h("input", {type: "checkbox", id: "reveal"});
  const controls = h("div", {class: "controls"},
    D.back ? h("a", {href: D.back, id: "back", text: "← all games"}) : null,
    h("label", {for: "reveal"}, reveal, " reveal roles and night actions"),
    h("span", {class: "muted small", text: "click a timeline entry to move the step slider there"}));
  app.appendChild(controls);
  function setReveal(on) { document.body.classList.toggle("revealed", on); reveal.checked = on; }
  reveal.addEventListener("change", () => setReveal(reveal.checked));

  const dead = {};
  for (const it of D.items) {
    if (it.k === "deaths") for (const p of it.players) if (p !== null) dead[p] = "died, round " + it.round;
    if (it.k === "exile" && it.player !== null && it.player !== undefined) dead[it.player] = "exiled, round " + it.round;
  }
  const roster = h("div", {class: "roster"});
  for (let p = 0; p < N; p++) {
    const r = D.roles[p];
    roster.appendChild(h("div", {class: "seat" + (dead[p] ? " dead" : ""), "data-seat": p},
      h("b", {text: P(p)}),
      r ? h("span", {class: "role secret tag " + team(r), text: r}) : null,
      B.models[p] ? h("span", {class: "tag", text: B.models[p]}) : null,
      h("span", {class: "small muted", text: dead[p] ? " " + dead[p] : " alive at the end"})));
  }
  app.appendChild(roster);

  // ---- helpers -----------------------------------------------------------------------
  function rawCalls(calls) {
    if (!calls || !calls.length) return null;
    return lazyDetails("raw model answers (" + calls.length + ")", () => h("div", {},
      calls.map(c => h("div", {class: "call"},
        h("div", {class: "small muted", text: P(c.seat) + " · " + c.task + (c.cached ? " · from cache" : "") + (c.fallback ? " · fallback" : "")}),
        h("pre", {class: "raw answer", text: c.answer === null || c.answer === undefined ? "(no answer)" : String(c.answer)})))), "raw");
  }
  function actText(a) {
    if (!a) return "";
    const t = a.target !== null && a.target !== undefined ? " " + P(a.target) : "";
    switch (a.kind) {
      case "claim": return "claims to be the " + a.role;
      case "accuse": return "accuses" + t;
      case "defend": return "defends" + t;
      case "share_check": return "shares a check:" + t + " is " + a.result;
      case "nothing": return "says nothing new";
      default: return String(a.kind || "") + t;
    }
  }
  function eventText(kind, d) {
    switch (kind) {
      case "role": return P(d.player) + " is the " + d.role;
      case "partners": return "The werewolves are " + (d.werewolves || []).map(P).join(", ");
      case "wolf_vote": return P(d.player) + " (werewolf) wants to kill " + P(d.target);
      case "victim": return "Tonight's victim: " + P(d.target);
      case "witch_victim": return "The witch learns tonight's victim: " + P(d.target);
      case "protect": return P(d.player) + " protects " + P(d.target);
      case "check": return P(d.player) + " (seer) checks " + P(d.target) + ": " + d.result;
      case "witch_save": return P(d.player) + " (witch) " + (d.used ? "saves the victim" : "does not save the victim");
      case "witch_poison": return d.target === null || d.target === undefined ? P(d.player) + " (witch) poisons nobody" : P(d.player) + " (witch) poisons " + P(d.target);
      default: return kind + ": " + JSON.stringify(d);
    }
  }
  function wolfColour(v) {
    const a = Math.max(0, Math.min(1, v));
    return "rgb(255," + Math.round(255 - 185 * a) + "," + Math.round(255 - 195 * a) + ")";
  }
  const items = [];
  function item(it, cls, ...children) {
    const el = h("div", {class: "item " + cls + (it.hidden ? " secret" : ""), "data-step": it.step, "data-kind": it.k}, ...children);
    el.addEventListener("click", (ev) => { if (!ev.target.closest("details")) setStep(it.step); });
    items.push(el);
    return el;
  }

  // ---- timeline ----------------------------------------------------------------------
  const timeline = h("section", {class: "timeline", id: "timeline"});
  for (const it of D.items) {
    switch (it.k) {
      case "phase":
        timeline.appendChild(h("h2", {class: "phase " + it.phase, "data-round": it.round, text: "Round " + it.round + " · " + (it.phase === "night" ? "Night" : "Day")}));
        break;
      case "event": {
        const el = item(it, "event" + (it.hidden ? " night" : ""), h("span", {text: eventText(it.kind, it.data)}));
        if (it.hidden) el.insertBefore(h("span", {class: "tag secret-tag", text: "private"}), el.firstChild);
        if (it.calls) el.appendChild(rawCalls(it.calls));
        timeline.appendChild(el);
        break;
      }
      case "deaths": {
        const roles = it.roles || {};
        timeline.appendChild(item(it, "deaths", h("b", {text: "Dawn: "}),
          it.players.length ? it.players.map((p, i) => h("span", {class: "death"}, (i ? ", " : ""), P(p), roles[p] ? " (" + roles[p] + ")" : "")) : "nobody died"));
        break;
      }
      case "bids": {
        const ranked = Object.entries(it.bids).sort((a, b) => b[1] - a[1]);
        timeline.appendChild(item(it, "bids small",
          h("span", {class: "muted", text: "Bids for turn " + (Number(it.turn) + 1) + ": "}),
          ranked.map(([p, b]) => h("span", {class: "bid" + (Number(p) === it.winner ? " won" : ""), text: P(p) + " " + b})),
          rawCalls(it.calls)));
        break;
      }
      case "speech": {
        const a = it.act || {};
        const peers = h("table", {class: "peers"}, h("tr", {},
          h("th", {text: "listener"}), h("th", {text: "judged"}), h("th", {class: "num", text: "confidence"}), h("th", {class: "num", text: "suspicion"}), h("th", {text: "reasoning"})));
        for (const q of it.peers) {
          peers.appendChild(h("tr", {class: "peer"},
            h("td", {text: P(q.observer)}),
            h("td", {}, h("span", {class: "tag " + (q.deceptive ? "dec" : "ok"), text: q.deceptive ? "deceptive" : "honest"})),
            h("td", {class: "num", text: fmt(q.confidence, 2)}),
            h("td", {class: "num", text: fmt(q.suspicion, 2)}),
            h("td", {class: "small", text: q.reasoning || ""})));
        }
        const truth = it.truth === null || it.truth === undefined ? null :
          h("span", {class: "tag secret truth " + (it.truth ? "dec" : "ok"), text: "truth: " + (it.truth ? "deceptive" : "honest")});
        const self = it.self ? h("span", {class: "secret small muted", text: " self-report: " + (it.self.deceptive ? "deceptive (" + it.self.kind + ")" : "honest") + ", confidence " + fmt(it.self.confidence, 2)}) : null;
        timeline.appendChild(item(it, "speech",
          h("div", {class: "who"}, h("b", {text: P(it.seat)}), " ",
            a.tone ? h("span", {class: "tag tone-" + a.tone, text: a.tone}) : null,
            h("span", {class: "tag act", text: actText(a)}), truth, self),
          h("div", {class: "text statement", text: it.text === null || it.text === undefined ? "(" + actText(a) + ")" : it.text}),
          it.peers.length ? peers : null,
          rawCalls(it.calls.concat(it.peers.filter(q => q.answer !== undefined).map(q => ({seat: q.observer, task: "werewolf.peer_analysis", answer: q.answer}))))));
        break;
      }
      case "votes": {
        const tally = {};
        for (const t of Object.values(it.votes)) tally[t] = (tally[t] || 0) + 1;
        const rows = Object.entries(it.votes).map(([v, t]) => h("span", {class: "vote", text: P(v) + " → " + P(t)}));
        timeline.appendChild(item(it, "votes", h("b", {text: "Votes: "}), rows,
          h("div", {class: "small muted", text: "tally: " + Object.entries(tally).sort((a, b) => b[1] - a[1]).map(([t, n]) => P(t) + " " + n).join(", ")}),
          rawCalls(it.calls)));
        break;
      }
      case "exile": {
        const role = it.roles && it.player !== null ? it.roles[it.player] : null;
        timeline.appendChild(item(it, "exile", h("b", {text: "Exile: "}),
          it.player === null || it.player === undefined ? "nobody is exiled" : h("span", {class: "exiled"}, P(it.player), role ? " (" + role + ")" : "")));
        break;
      }
      case "scratchpad":
        timeline.appendChild(item(it, "scratchpad secret small",
          lazyDetails(P(it.seat) + "'s scratchpad", () => h("div", {},
            h("div", {class: "text", text: it.text || ""}),
            it.answer ? h("pre", {class: "raw answer", text: it.answer}) : null), "raw")));
        break;
      case "calls":
        timeline.appendChild(item(it, "calls small", rawCalls(it.calls)));
        break;
      default:
        timeline.appendChild(item(it, "other small", h("span", {text: it.k + " " + JSON.stringify(it)})));
    }
  }
  if (res) {
    const det = res.deception && res.deception.peer_detection;
    timeline.appendChild(h("div", {class: "result"},
      h("h2", {text: "Result: " + res.winner + " after " + res.rounds + " round(s), " + res.steps + " steps"}),
      h("div", {class: "small", text: "model calls " + (res.model_calls ?? "–") + " · fallbacks " + ((res.parse_stats || {}).total_fallbacks ?? "–") + (det ? " · peer detection precision " + fmt(det.precision, 2) + ", recall " + fmt(det.recall, 2) : "")}),
      h("div", {class: "secret"}, "Roles: ", D.roles.map((r, p) => h("span", {class: "tag " + team(r), text: P(p) + " " + r})))));
  }

  // ---- minds at a step ---------------------------------------------------------------
  // The log's belief snapshots come as per-seat changes; replay them into full snapshots.
  function decodeBeliefs(b) {
    const out = {}, players = {}, edges = {}, retrieved = {};
    const graphSeats = new Set((b.graph_seats || []).map(Number));
    for (const [seat, step, consulted, pl, ed, rt] of b.changes || []) {
      const P0 = players[seat] = players[seat] || {};
      for (const [p, pw, trust, id, stance, pinned, dist] of pl) {
        const d = dist ? Object.fromEntries(b.hypotheses.map((h, i) => [h, dist[i]]).filter(([, v]) => v > 0)) : null;
        P0[p] = {p, pw, trust, id: b.labels[id], stance: b.labels[stance], pinned: !!pinned, dist: d};
      }
      const E0 = edges[seat] = edges[seat] || new Map();
      for (const [a, c, t] of ed) { if (t === null) E0.delete(a + ">" + c); else E0.set(a + ">" + c, [a, c, t]); }
      if (rt) retrieved[seat] = rt.map(([st, speaker, text]) => ({step: st, speaker, text}));
      const snap = {seat, step, consulted: !!consulted, players: Object.values(P0).sort((x, y) => x.p - y.p)};
      if (graphSeats.has(seat)) snap.edges = [...E0.values()];
      if (retrieved[seat]) snap.retrieved = retrieved[seat];
      (out[seat] = out[seat] || []).push(snap);
    }
    return out;
  }
  const bySeat = decodeBeliefs(B);
  const snapSteps = Object.values(bySeat).flat().map(s => s.step);
  const steps = [...new Set([0, ...snapSteps, ...D.suspicion.map(s => s.step), ...D.items.map(i => i.step)])].sort((a, b) => a - b);
  function snapAt(seat, step) {
    const list = bySeat[seat] || [];
    let best = null;
    for (const s of list) { if (s.step <= step) best = s; else break; }
    return best;
  }
  function suspicionAt(step) {
    const m = {};
    for (const s of D.suspicion) { if (s.step > step) break; (m[s.observer] = m[s.observer] || {})[s.subject] = s.value; }
    return m;
  }
  const roundAt = (step) => { let r = 1; for (const it of D.items) { if (it.step > step) break; r = it.round; } return r; };

  const slider = h("input", {type: "range", id: "step", min: 0, max: steps.length - 1, value: steps.length - 1, step: 1});
  const stepLabel = h("span", {class: "small", id: "step-label"});
  const seatSel = h("select", {id: "seat", "aria-label": "seat"});
  for (let p = 0; p < N; p++) seatSel.appendChild(h("option", {value: p, text: P(p) + (B.models[p] ? " · " + B.models[p] : "")}));
  const firstModelSeat = Object.keys(B.models).find(p => B.models[p] === "gratr") ?? Object.keys(B.models)[0];
  if (firstModelSeat !== undefined) seatSel.value = firstModelSeat;
  const matrixBox = h("div", {id: "matrix"});
  const seatBox = h("div", {id: "seat-view"});
  const minds = h("aside", {class: "minds"},
    h("h2", {text: "Minds at a step"}),
    h("div", {}, slider), stepLabel,
    Object.keys(B.skipped || {}).length ? h("p", {class: "note", text: "not replayed: " + Object.entries(B.skipped).map(([k, v]) => (k === "all" ? "all seats" : P(Number(k))) + " (" + v + ")").join("; ")}) : null,
    matrixBox, h("div", {class: "seatpick"}, h("label", {}, "seat ", seatSel)), seatBox);
  app.appendChild(h("div", {class: "layout"}, timeline, minds));

  function matrix(step) {
    const sus = suspicionAt(step);
    const big = N > 10;  // a big table: colours only (values on hover)
    const t = h("table", {class: "matrix" + (big ? " big" : "")});
    t.appendChild(h("tr", {}, h("th", {text: "↓ about →"}), [...Array(N).keys()].map(q => h("th", {class: "num", text: String(q + 1)}))));
    for (let p = 0; p < N; p++) {
      const snap = snapAt(p, step);
      const row = h("tr", {}, h("th", {text: big ? String(p + 1) : P(p)}));
      for (let q = 0; q < N; q++) {
        let v = null, how = "";
        if (snap) {
          const e = snap.players.find(x => x.p === q);
          if (e && e.pw !== null && e.pw !== undefined) { v = e.pw; how = B.models[p] + " P(werewolf)"; }
        }
        if (v === null && sus[p] && sus[p][q] !== undefined) { v = sus[p][q]; how = "suspicion from peer analyses"; }
        row.appendChild(p === q ? h("td", {class: "self"}) :
          h("td", {class: "num cell", title: P(p) + " about " + P(q) + ": " + (v === null ? "no estimate" : fmt(v, 2) + " (" + how + ")"),
            style: "background:" + (v === null ? "#fafafa" : wolfColour(v)), text: v === null || big ? "" : fmt(v, 2)}));
      }
      t.appendChild(row);
    }
    return h("div", {}, h("h3", {text: "How much each seat suspects each other seat"}),
      h("p", {class: "note", text: "Rows: the observer. Its opponent model's P(werewolf) where it has one, else its suspicion score from its peer analyses (white 0 → red 1)."}), t);
  }

  function graph(snap, seat) {
    const W = 330, R = 125, c = W / 2;
    const pos = (p) => [c + R * Math.sin(2 * Math.PI * p / N), c - R * Math.cos(2 * Math.PI * p / N)];
    const svg = s("svg", {width: W, height: W, viewBox: "0 0 " + W + " " + W, class: "graph", role: "img", "aria-label": "trust graph"});
    const defs = s("defs", {});
    svg.appendChild(defs);
    for (const [a, b, tr] of snap.edges || []) {
      const [x1, y1] = pos(a), [x2, y2] = pos(b);
      const dx = x2 - x1, dy = y2 - y1, L = Math.hypot(dx, dy) || 1;
      const ox = -dy / L * 5, oy = dx / L * 5;  // a small offset keeps a→b and b→a apart
      const sx = x1 + dx / L * 16 + ox, sy = y1 + dy / L * 16 + oy, ex = x2 - dx / L * 18 + ox, ey = y2 - dy / L * 18 + oy;
      svg.appendChild(s("line", {class: "edge", x1: sx, y1: sy, x2: ex, y2: ey, stroke: trustColour(tr), "stroke-width": 1 + 2.5 * Math.abs(tr || 0)},
        s("title", {text: P(a) + " → " + P(b) + ": edge trust " + fmt(tr, 2)})));
      svg.appendChild(s("circle", {cx: ex, cy: ey, r: 2.5, fill: trustColour(tr)}));
    }
    const trustOf = {};
    for (const e of snap.players) trustOf[e.p] = e.trust;
    for (let p = 0; p < N; p++) {
      const [x, y] = pos(p);
      const me = p === Number(seat);
      const tr = me ? null : trustOf[p];
      svg.appendChild(s("circle", {class: "node", cx: x, cy: y, r: 15, fill: me ? "#fff" : trustColour(tr), stroke: me ? "#2d5fa8" : "#555", "stroke-width": me ? 3 : 1},
        s("title", {text: P(p) + (me ? " (this seat)" : ": trust " + fmt(tr, 2))})));
      svg.appendChild(s("text", {x: x, y: y + 4, "text-anchor": "middle", "font-size": 11, text: String(p + 1)}));
    }
    return svg;
  }

  function seatView(seat, step) {
    const model = B.models[seat];
    const snap = snapAt(seat, step);
    const box = h("div", {});
    box.appendChild(h("h3", {text: P(seat) + (model ? " — " + model : " — no opponent model")}));
    if (model && !snap) box.appendChild(h("p", {class: "muted", text: "no belief records yet at this step"}));
    if (snap) {
      box.appendChild(h("p", {class: "note", text: "as of step " + snap.step + (snap.consulted ? " (read for a decision)" : "")}));
      if (snap.edges) {
        box.appendChild(graph(snap, seat));
        box.appendChild(h("p", {class: "note", text: "GRATR trust graph: nodes coloured by the seat's trust T(p), edges by edge trust (red −1, grey 0, green +1); hover for values."}));
      }
      const t = h("table", {class: "beliefs"}, h("tr", {}, h("th", {text: "player"}), h("th", {text: "identity"}), h("th", {text: "P(werewolf)"}), snap.edges ? h("th", {class: "num", text: "trust"}) : null, h("th", {text: "roles"})));
      for (const e of snap.players) {
        const dist = e.dist ? Object.entries(e.dist).sort((a, b) => b[1] - a[1]) : [];
        t.appendChild(h("tr", {class: "belief-row"},
          h("td", {text: P(e.p) + (e.pinned ? " (fact)" : "")}),
          h("td", {text: e.id || ""}),
          h("td", {}, e.pw === null || e.pw === undefined ? "–" : [bar(e.pw, "wolfbar"), fmt(e.pw, 2)]),
          snap.edges ? h("td", {class: "num", text: fmt(e.trust, 2)}) : null,
          h("td", {class: "small"}, dist.map(([r, p]) => h("span", {class: "rolebar", title: r + " " + fmt(p, 2)}, r + " ", bar(p, "role-" + r))))));
      }
      if (snap.players.length) box.appendChild(t);
      if (snap.retrieved) {
        box.appendChild(h("h3", {text: "Retrieved for the last decision"}));
        for (const m of snap.retrieved) box.appendChild(h("div", {class: "text retrieved small", text: "[round " + m.step + "] " + m.text}));
      }
    }
    const sus = suspicionAt(step)[seat];
    if (sus) {
      box.appendChild(h("h3", {text: "Suspicion from its peer analyses"}));
      box.appendChild(h("div", {}, Object.entries(sus).map(([q, v]) => h("div", {class: "small"}, P(q) + " ", bar(v, "wolfbar"), fmt(v, 2)))));
    }
    return box;
  }

  function render() {
    const step = steps[Number(slider.value)];
    stepLabel.textContent = "step " + step + " of " + steps[steps.length - 1] + " · round " + roundAt(step);
    matrixBox.textContent = "";
    matrixBox.appendChild(matrix(step));
    seatBox.textContent = "";
    seatBox.appendChild(seatView(Number(seatSel.value), step));
    for (const el of items) el.classList.toggle("future", Number(el.dataset.step) > step);
  }
  function setStep(step) {
    let i = 0;
    while (i + 1 < steps.length && steps[i + 1] <= step) i++;
    slider.value = i;
    render();
  }
  slider.addEventListener("input", render);
  seatSel.addEventListener("change", render);

  const frag = new URLSearchParams(location.hash.slice(1));
  if (frag.has("reveal")) setReveal(true);
  if (frag.has("seat")) seatSel.value = frag.get("seat");
  if (frag.has("step")) setStep(Number(frag.get("step"))); else render();
  ready();
})();
