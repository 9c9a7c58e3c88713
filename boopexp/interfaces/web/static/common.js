// Small helpers shared by the pages of boopexp serve (plain JavaScript, no build step).
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === "text") node.textContent = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

// The JSON of ``response``; a refused request throws its one line (``error``), the body as ``err.data``.
async function answer(response) {
  const body = await response.json();
  if (!response.ok) { const err = new Error(body.error || response.statusText); err.data = body; throw err; }
  return body;
}

async function getJSON(url) {
  return answer(await fetch(url, {cache: "no-store"}));
}

async function postJSON(url, body) {
  return answer(await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"},
                                  body: JSON.stringify(body || {})}));
}

function query(params) {
  return Object.entries(params).filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => encodeURIComponent(k) + "=" + encodeURIComponent(v)).join("&");
}

function gameURL(store, pairing, index, configHash) {
  return "/game?" + query({store: store, pairing: pairing, index: index, config_hash: configHash});
}

function storeURL(store) { return "/store?" + query({store: store}); }

function fileURL(path) { return "/files?" + query({path: path}); }

function progress(done, planned) {
  const share = planned ? Math.min(1, done / planned) : 1;
  const bar = el("span", {class: "bar"}, el("span", {class: "fill", style: "width:" + (100 * share).toFixed(1) + "%"}));
  return el("span", {class: "progress"}, bar, " " + done + " / " + planned);
}

function sprtLine(t) {
  return t.first + " vs " + t.second + ": LLR " + t.llr.toFixed(2) + " in (" + t.lower.toFixed(2) + ", " +
    t.upper.toFixed(2) + ") for [" + t.elo0 + ", " + t.elo1 + "] Elo: " + t.decision + " after " + t.pairs + " pairs";
}

function forfeitText(forfeits) {
  const parts = [];
  for (const [agent, kinds] of Object.entries(forfeits || {})) {
    for (const [kind, n] of Object.entries(kinds)) parts.push(agent + " " + kind + " ×" + n);
  }
  return parts.join(", ");
}

// A table's rows, one per key of ``data`` (a ply's telemetry): <th>key</th><td>value (objects as JSON)</td>.
function keyValueRows(data) {
  return Object.entries(data || {}).map(([k, v]) =>
    el("tr", {}, el("th", {text: k}), el("td", {text: typeof v === "object" ? JSON.stringify(v) : String(v)})));
}
