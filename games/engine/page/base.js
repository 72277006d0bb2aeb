// Shared helpers of every gt-llm page. Strings always go in through textContent
// or setAttribute (on a fixed list of attribute names): no innerHTML anywhere.
"use strict";
const T0 = performance.now();
const SVGNS = "http://www.w3.org/2000/svg";
const SAFE_ATTRS = new Set([
  "class", "id", "title", "href", "type", "min", "max", "step", "value", "for", "colspan",
  "open", "checked", "role", "aria-label", "width", "height", "viewBox", "x", "y", "x1", "y1",
  "x2", "y2", "cx", "cy", "r", "d", "fill", "stroke", "stroke-width", "text-anchor",
  "dominant-baseline", "font-size", "opacity", "marker-end", "points", "rx", "transform",
  "data-kind", "data-seat", "data-step", "data-round", "data-i", "style",
]);

// A script error must not leave a blank page: say what failed, as text.
window.addEventListener("error", (ev) => {
  const app = document.getElementById("app");
  if (!app || document.body.dataset.ready) return;
  const box = document.createElement("p");
  box.className = "page-error";
  box.textContent = "This page could not be drawn: " + (ev.message || "script error") +
    ". Re-write it with the gt-llm command that made it; if this persists, report it.";
  app.prepend(box);
  document.body.dataset.error = "1";
});

function pageData() {
  return JSON.parse(document.getElementById("page-data").textContent);
}

function put(node, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") { node.textContent = String(v); continue; }
    if (k.startsWith("on")) { node.addEventListener(k.slice(2), v); continue; }
    if (!SAFE_ATTRS.has(k)) throw new Error("attribute not allowed: " + k);
    // Links are relative and percent-encoded by the writer (html_page.href): no scheme can pass.
    if (k === "href" && !/^[A-Za-z0-9_./#%~-]+$/.test(String(v))) throw new Error("bad href: " + String(v));
    node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

// h("div", {class: "x"}, "text", child, ...): an HTML element.
function h(tag, attrs, ...children) { return put(document.createElement(tag), attrs, children); }
// s("circle", {...}): an SVG element.
function s(tag, attrs, ...children) { return put(document.createElementNS(SVGNS, tag), attrs, children); }

function fmt(x, digits = 3) {
  if (x === null || x === undefined || Number.isNaN(x)) return "–";
  if (typeof x !== "number") return String(x);
  if (x !== 0 && Math.abs(x) < Math.pow(10, -digits)) return x.toExponential(1);
  return x.toFixed(digits);
}

function pct(x) { return x === null || x === undefined ? "–" : (100 * x).toFixed(1) + " %"; }

// A horizontal bar for a probability in [0, 1].
function bar(p, cls = "") {
  const w = Math.max(0, Math.min(1, p || 0)) * 100;
  return h("span", {class: "bar " + cls, title: fmt(p)}, h("span", {class: "fill", style: "width:" + w.toFixed(1) + "%"}));
}

// Diverging colour for a value in [-1, 1]: red (-1), grey (0), green (+1).
function trustColour(t) {
  if (t === null || t === undefined) return "#bbb";
  const x = Math.max(-1, Math.min(1, t));
  const grey = [200, 200, 200], neg = [200, 40, 40], pos = [40, 150, 60];
  const to = x < 0 ? neg : pos, a = Math.abs(x);
  const c = grey.map((g, i) => Math.round(g + (to[i] - g) * a));
  return "rgb(" + c.join(",") + ")";
}

// <details> with a summary line; body built only when first opened (keeps big pages fast).
function lazyDetails(summary, build, cls = "") {
  const d = h("details", {class: cls}, h("summary", {text: summary}));
  let built = false;
  d.addEventListener("toggle", () => {
    if (d.open && !built) { built = true; d.appendChild(build()); }
  });
  return d;
}

function header(title, subtitle, note) {
  return h("header", {},
    h("h1", {text: title}),
    subtitle ? h("p", {class: "sub", text: subtitle}) : null,
    note ? h("p", {class: "note", text: note}) : null);
}

// Marks the page as rendered (tests and the benchmark wait for data-ready).
function ready() {
  document.body.dataset.renderMs = (performance.now() - T0).toFixed(1);
  document.body.dataset.ready = "1";
}
