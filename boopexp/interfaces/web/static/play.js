// Playing against an agent: click an empty square to place a small or large piece, choose the
// group to promote when several line up, undo, hint. The agent thinks on the server; the page
// polls the game's state until it has moved.
"use strict";

(function () {
  const form = document.getElementById("new-game");
  if (form) {  // the form: choose the opponent (a built-in agent, or a config's with its settings), start
    const opponents = JSON.parse(document.getElementById("opponents-data").textContent);
    const select = document.getElementById("agent"), own = document.getElementById("own-budget");
    const chosen = () => {
      const option = select.selectedOptions[0];
      const config = option.dataset.config ? opponents.configs.find(c => c.name === option.dataset.config) : null;
      const agent = (config ? config.agents : opponents.builtin).find(a => a.name === option.value);
      return {config: config, agent: agent};
    };
    const describe = () => {
      const {config, agent} = chosen();
      // a config's agent plays with the config's budget and seed: the form's are not sent (disabled)
      for (const input of own.querySelectorAll("input, select")) input.disabled = Boolean(config);
      own.hidden = Boolean(config);
      const rows = {agent: agent.settings};
      if (config) {
        Object.assign(rows, {config: config.name + " (" + config.source + ")", budget: config.budget,
                             preset: config.preset, seed: config.seed, "ply cap": config.max_plies || 1000});
        if (config.openings) rows.openings = config.openings;
      }
      document.querySelector("#opponent-settings tbody").replaceChildren(...keyValueRows(rows));
    };
    select.addEventListener("change", describe);
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
    drawBoard($("board"), s.position, s.last);
    document.body.dataset.plies = String(s.moves.length);
    document.body.dataset.state = s.over ? "over" : s.thinking ? "thinking" : s.human_to_move ? "your-move" : "waiting";
    $("pools").textContent = poolsText(s.position);
    $("abandon").hidden = s.over;
    $("status").textContent = s.over ? "Game over: " + s.result :
      s.thinking ? (s.human_to_move ? "Searching a hint…" : s.agent + (s.config ? " (" + s.config + ")" : "") +
        " is thinking…") :
      "Your move (" + s.human + ")" + (s.hint ? " · hint: " + s.hint.move : "");
    $("moves").replaceChildren(...s.moves.map((m, i) => el("li", {class: i % 2 ? "red" : "blue", text: m})));
    $("telemetry").tBodies[0].replaceChildren(...keyValueRows(s.telemetry));
    $("message").textContent = s.error || "";
    for (const rect of document.querySelectorAll("#board rect[data-square]")) {
      const sq = rect.dataset.square;
      if (s.human_to_move && (s.legal.includes(sq) || s.legal.includes(sq.toUpperCase()))) rect.classList.add("legal");
      rect.addEventListener("click", () => clicked(sq));
    }
    if (s.hint) {
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
