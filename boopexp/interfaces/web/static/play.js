// Playing against an agent: choose the game (boop., Connect Four, …) and the opponent; in boop. click
// an empty square to place a small or large piece, choose the group to promote when several line up;
// in another game click a part of its board that names a legal move (its SVG's data-move: a Connect
// Four column) or choose the move from the list; undo, hint. The agent thinks on the server; the page
// polls the game's state until it has moved.
"use strict";

(function () {
  const form = document.getElementById("new-game");
  if (form) {  // the form: choose the opponent (a built-in agent, or a config's with its settings), start
    const opponents = JSON.parse(document.getElementById("opponents-data").textContent);
    const select = document.getElementById("agent"), own = document.getElementById("own-budget");
    const gameSelect = document.getElementById("game"), ownGame = document.getElementById("own-game");
    const chosen = () => {
      const option = select.selectedOptions[0];
      const config = option.dataset.config ? opponents.configs.find(c => c.name === option.dataset.config) : null;
      const builtin = (opponents.games.find(g => g.name === gameSelect.value) || {agents: opponents.builtin}).agents;
      const agent = (config ? config.agents : builtin).find(a => a.name === option.value);
      return {config: config, agent: agent};
    };
    const describe = () => {
      const {config, agent} = chosen();
      // a config's agent plays with the config's budget, seed and game: the form's are not sent (disabled)
      for (const input of own.querySelectorAll("input, select")) input.disabled = Boolean(config);
      own.hidden = Boolean(config);
      gameSelect.disabled = ownGame.hidden = Boolean(config);
      const game = config ? config.game || "boop" : gameSelect.value;
      for (const name of document.querySelectorAll(".colour-name")) {
        name.textContent = game === "boop" ? name.dataset.boop : name.dataset.other;
      }
      const rows = {agent: agent.settings};
      if (config) {
        Object.assign(rows, {config: config.name + " (" + config.source + ")", budget: config.budget,
                             preset: config.preset, seed: config.seed, "ply cap": config.max_plies || 1000});
        if (config.openings) rows.openings = config.openings;
      }
      document.querySelector("#opponent-settings tbody").replaceChildren(...keyValueRows(rows));
    };
    select.addEventListener("change", describe);
    gameSelect.addEventListener("change", describe);
    describe();
    form.addEventListener("submit", async ev => {
      ev.preventDefault();
      // the body as /api/play reads it: numbers as numbers, and only the chosen budget's key
      const fields = Object.fromEntries(new FormData(form).entries());
      const body = {agent: fields.agent, colour: fields.colour};
      const {config} = chosen();
      if (config) {
        body.config = config.name;
      } else {
        if (fields.game !== "boop") body.game = fields.game;
        body.budget = fields.budget;
        body[fields.budget === "device" ? "seconds" : "iterations"] = Number(fields[fields.budget === "device" ?
                                                                                     "seconds" : "iterations"]);
        body.seed = Number(fields.seed);
      }
      try {
        const data = await postJSON("/api/play", body);
        window.location.href = "/play?" + query({game: data.id});
      } catch (err) {
        document.getElementById("form-error").textContent = err.message;
      }
    });
    return;
  }
  const id = JSON.parse(document.getElementById("play-data").textContent).id;
  const $ = sel => document.getElementById(sel);
  const api = "/api/play/" + encodeURIComponent(id);
  let state = null, polling = null;

  function size() { return document.querySelector("input[name=size]:checked").value; }

  function render(s) {
    state = s;
    const boop = s.game === "boop";
    if (boop) drawBoard($("board"), s.position, s.last); else drawGame($("board"), s.position);
    document.body.dataset.plies = String(s.moves.length);
    document.body.dataset.state = s.over ? "over" : s.thinking ? "thinking" : s.human_to_move ? "your-move" : "waiting";
    document.body.dataset.game = s.game;
    $("pools").textContent = boop ? poolsText(s.position) : s.over ? "" : s.position.to_move + " to move";
    $("abandon").hidden = s.over;
    const you = boop ? s.human : s.human === "blue" ? "p1" : "p2";
    $("status").textContent = s.over ? "Game over: " + s.result :
      s.thinking ? (s.human_to_move ? "Searching a hint…" : s.agent + (s.config ? " (" + s.config + ")" : "") +
        " is thinking…") :
      "Your move (" + you + ")" + (s.hint ? " · hint: " + s.hint.move : "");
    $("moves").replaceChildren(...s.moves.map((m, i) => el("li", {class: i % 2 ? "red" : "blue", text: m})));
    $("telemetry").tBodies[0].replaceChildren(...keyValueRows(s.telemetry));
    $("message").textContent = s.error || "";
    $("sizes").hidden = !boop;
    $("move-list").hidden = boop;
    if (!boop) {
      renderMoves(s);
    } else for (const rect of document.querySelectorAll("#board rect[data-square]")) {
      const sq = rect.dataset.square;
      if (s.human_to_move && (s.legal.includes(sq) || s.legal.includes(sq.toUpperCase()))) rect.classList.add("legal");
      rect.addEventListener("click", () => clicked(sq));
    }
    if (s.hint && boop) {
      const h = document.querySelector("#board rect[data-square='" + s.hint.move.slice(0, 2).toLowerCase() + "']");
      if (h) h.classList.add("hinted");
    }
    if (s.saved && !s.saved.folder) {  // the play folder could not take it: its record, to keep
      $("saved").replaceChildren(el("p", {id: "saved-line", text: "Not saved: " + s.saved.problem +
                                          ". The game's record (JSON):"}),
                                 el("pre", {id: "unsaved-record", text: JSON.stringify(s.saved.record)}));
    } else if (s.saved) {
      const where = s.saved;
      const line = el("p", {id: "saved-line"}, "Saved as " + where.pairing + " #" + where.index +
        (where.folder ? " in " + where.folder : "") + (where.problem ? " (" + where.problem + ")" : "") + ". ");
      if (where.store !== undefined) {
        line.append(el("a", {id: "open-viewer", href: gameURL(where.store, where.pairing, where.index, where.config_hash),
                             text: "Open it in the viewer"}));
      }
      $("saved").replaceChildren(line);
    }
    if (s.thinking && !polling) polling = setInterval(refresh, 250);
    if (!s.thinking && polling) { clearInterval(polling); polling = null; }
  }

  async function refresh() {
    try { render(await getJSON(api)); } catch (err) { $("message").textContent = err.message; }
  }

  async function play(move, choice) {
    $("choices").replaceChildren();
    try {
      render(await postJSON(api + "/move", {move: move, choice: choice}));
    } catch (err) {
      if (err.data && err.data.choices) {
        $("choices").replaceChildren(el("span", {text: "Promote: "}), ...err.data.choices.map((g, i) => {
          const b = el("button", {class: "choice", "data-choice": String(i), text: g.join(" ")});
          b.onclick = () => play(move, i);
          return b;
        }));
      } else {
        $("message").textContent = err.message;
      }
    }
  }

  // Another game's moves: the parts of its SVG that name a legal move (data-move) are clicked to play
  // it; the list offers every legal move (the only way for a game that draws no SVG).
  function renderMoves(s) {
    for (const part of document.querySelectorAll("#board [data-move]")) {
      const move = part.dataset.move;
      if (s.human_to_move && s.legal.includes(move)) part.classList.add("legal");
      if (s.hint && s.hint.move === move) part.classList.add("hinted");
      part.addEventListener("click", () => { if (state && state.human_to_move && state.legal.includes(move)) play(move, null); });
    }
    $("legal-moves").replaceChildren(...s.legal.map(m => el("option", {value: m, text: m})));
    $("play-move").disabled = !s.human_to_move || !s.legal.length;
  }
  $("play-move").onclick = () => { const move = $("legal-moves").value; if (move) play(move, null); };

  function clicked(square) {
    if (!state || !state.human_to_move) return;
    // the chosen size, or the other when the pool has none of it left
    const small = square, large = square.toUpperCase();
    const wanted = size() === "large" ? [large, small] : [small, large];
    const move = wanted.find(m => state.legal.includes(m));
    if (move) play(move, null);
  }

  $("undo").onclick = async () => {
    try { render(await postJSON(api + "/undo")); } catch (err) { $("message").textContent = err.message; }
  };
  $("hint").onclick = async () => {
    try { render(await postJSON(api + "/hint")); } catch (err) { $("message").textContent = err.message; }
  };
  $("abandon").onclick = async () => {
    try {
      await answer(await fetch(api, {method: "DELETE"}));
      window.location.href = "/play";
    } catch (err) { $("message").textContent = err.message; }
  };
  refresh();
})();
