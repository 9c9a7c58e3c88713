// The game viewer: step through the plies of a stored game (buttons, slider, ←/→, Home/End, a ply
// number); the URL keeps the ply (?ply=N). "The search": the root of the MCTS search that chose the
// shown move, re-run by the server from the record (/api/game/search; device and iterations games of
// boop.). A game other than boop. is drawn by its own SVG (or its text board: drawGame).
"use strict";

(function () {
  const data = JSON.parse(document.getElementById("game-data").textContent);
  const record = data.record, last = data.plies.length;
  const $ = id => document.getElementById(id);
  const slider = $("slider"), input = $("ply");
  slider.max = input.max = String(last);
  $("plies").textContent = String(last);

  const boop = data.game === "boop", drawn = record.termination === "draw";
  // another game's side by its own name (Pentago-Swap's "white (p1)"): boop.'s pages say Blue and Red
  const sideName = side => data.sides[side === "p1" ? 0 : 1], named = side => sideName(side) + " (" + side + ")";
  const winner = record.winner;
  let result = winner ? record[winner] + " (" + winner + ", " + (boop ? record.winner_colour : sideName(winner)) + ") wins" :
    drawn ? "a draw" : "no winner";
  result += " · " + record.termination + " · " + record.plies + " plies";
  if (record.forfeit) {
    const f = record.forfeit;
    result += " · forfeit by " + f.agent + " (" + f.player + ")" + (f.move ? ", move " + f.move : "") +
      (f.error ? ": " + f.error : "");
  }
  $("result").textContent = result;

  const facts = [[boop ? "p1 (Blue)" : "p1 (" + data.sides[0] + ", moves first)", record.p1],
    [boop ? "p2 (Red)" : "p2 (" + data.sides[1] + ")", record.p2]];
  if (!boop) facts.push(["game", data.game]);
  facts.push(["settings hash", record.config_hash],
    ["seed", record.seed], ["budget", JSON.stringify(record.budget)], ["preset", record.preset],
    ["experiment", record.experiment], ["host seconds", record.host_seconds], ["version", record.version]);
  if (record.sweep) facts.push(["sweep point", JSON.stringify(record.sweep)]);
  if (record.plugin_output) facts.push(["plugin output", JSON.stringify(record.plugin_output)]);
  for (const [k, v] of facts) $("facts").tBodies[0].append(el("tr", {}, el("th", {text: k}), el("td", {text: String(v)})));

  const list = $("moves");
  data.plies.forEach((p, i) => {
    const a = el("a", {href: "#", "data-ply": String(i + 1), class: p.colour, text: p.move});
    a.addEventListener("click", ev => { ev.preventDefault(); show(i + 1); });
    list.append(el("li", {}, a));
  });

  function telemetryRows(ply) {
    $("telemetry").tBodies[0].replaceChildren(...(ply === 0 ? [] : keyValueRows((record.telemetry || [])[ply - 1])));
  }

  // The search of move ``ply``: offered when an MCTS agent chose it in a game that replays exactly.
  const reproducible = ["device", "iterations"].includes((record.budget || {}).mode);
  function searchPanel(ply) {
    const note = $("search-note"), button = $("search-show"), table = $("search");
    table.hidden = true;
    button.hidden = true;
    if (ply === 0) { note.textContent = "Step to a move to see the search that chose it."; return; }
    if (!boop) { note.textContent = "The search is re-run for boop.'s games only (so far)."; return; }
    const side = data.plies[ply - 1].colour === "blue" ? "p1" : "p2";
    const spec = record[side + "_spec"] || {};
    if (spec.kind !== "mcts") {
      note.textContent = "Move " + ply + " was chosen by " + record[side] + " (" + spec.kind + "): no search tree.";
    } else if (!reproducible) {
      note.textContent = "A " + record.budget.mode + "-budget game depends on the host's speed: its searches " +
        "cannot be re-run exactly.";
    } else {
      note.textContent = "The root of " + record[side] + "'s search, re-run from the record's settings and seed.";
      button.hidden = false;
      button.onclick = () => loadSearch(ply);
    }
  }

  async function loadSearch(ply) {
    const note = $("search-note"), table = $("search");
    note.textContent = "Re-running the game up to move " + ply + "…";
    try {
      const found = await getJSON("/api/game/search?" + query({store: data.store, pairing: record.pairing,
        index: record.game_index, config_hash: record.config_hash, ply: ply}));
      if (ply !== current) return;  // the page moved on meanwhile
      const shown = found.children.filter(c => c.selectable || c.visits);
      table.tBodies[0].replaceChildren(...shown.map(c => el("tr", {class: c.move === found.chosen ? "played" : null,
          "data-move": c.move},
        el("td", {text: c.move}), el("td", {text: String(c.visits)}),
        el("td", {text: c.value === null ? "" : c.value.toFixed(4)}),
        el("td", {text: (c.move === found.chosen ? "played" : "") +
                        (c.proven === 1 ? " wins" : c.proven === -1 ? " loses" : "")}))));
      table.hidden = false;
      $("search-show").hidden = true;
      const left = found.children.length - shown.length;
      note.textContent = found.agent + " (" + found.side + "): " + found.visits + " visits of " +
        found.children.length + " moves, ranked as the search ranked them (best mean value first)" +
        (left ? "; " + left + " moves not selectable (the Selection injection's m best, or the early border mask)" : "") + ".";
    } catch (err) {
      if (ply === current) note.textContent = err.message;
    }
  }

  let current = -1;
  function show(ply, keepURL) {
    ply = Math.max(0, Math.min(last, Number.isFinite(ply) ? Math.trunc(ply) : 0));
    if (ply === current) return;
    current = ply;
    const p = ply ? data.plies[ply - 1] : null;
    const pos = data.positions[ply];
    if (boop) drawBoard($("board"), pos, p); else drawGame($("board"), pos);
    slider.value = input.value = String(ply);
    // the board after the winning move: who has won, not whose turn it would be
    const won = ply === last && record.termination === "victory" ?
      (boop ? record.winner_colour : named(record.winner)) : null;
    const turn = won ? won + " has won" : ply === last && drawn ? "a draw" :
      (boop ? pos.to_move : named(pos.to_move)) + " to move";
    $("pools").textContent = boop ? poolsText(pos) + " · " + turn : turn;
    $("position").textContent = pos.position;
    $("move-title").textContent = !p ? "Start" : boop ? "Ply " + ply + ": " + p.colour + " plays " + p.move +
      (p.pushes.length ? " (pushes " + p.pushes.map(x => x[0] + "→" + (x[1] || "off")).join(", ") + ")" : "") +
      (p.promoted.length ? " · promotes " + p.promoted.join(" ") : "") :
      "Ply " + ply + ": " + named(p.side) + " plays " + p.move;
    telemetryRows(ply);
    searchPanel(ply);
    for (const a of list.querySelectorAll("a.current")) a.classList.remove("current");
    const here = list.querySelector('a[data-ply="' + ply + '"]');
    if (here) { here.classList.add("current"); here.scrollIntoView({block: "nearest"}); }
    document.body.dataset.ply = String(ply);
    if (!keepURL) {
      const url = new URL(window.location.href);
      url.searchParams.set("ply", String(ply));
      history.replaceState(null, "", url);
    }
  }

  $("first").onclick = () => show(0);
  $("prev").onclick = () => show(current - 1);
  $("next").onclick = () => show(current + 1);
  $("last").onclick = () => show(last);
  slider.oninput = () => show(Number(slider.value));
  input.onchange = () => show(Number(input.value));
  document.addEventListener("keydown", ev => {
    if (ev.target === input) return;
    if (ev.key === "ArrowLeft") show(current - 1);
    else if (ev.key === "ArrowRight") show(current + 1);
    else if (ev.key === "Home") show(0);
    else if (ev.key === "End") show(last);
    else return;
    ev.preventDefault();
  });
  const asked = new URL(window.location.href).searchParams.get("ply");
  show(asked === null ? 0 : Number(asked), asked === null);
})();
