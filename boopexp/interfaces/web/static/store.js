// One store: its pairings' progress, SPRT state, forfeits, report files and games (polled every 2 s).
"use strict";

(function () {
  const store = JSON.parse(document.getElementById("store-data").textContent).store;
  const $ = id => document.getElementById(id);
  // the games come a page at a time (/api/store's offset and limit; the page's ?limit= sets its size)
  const limit = Number(new URLSearchParams(window.location.search).get("limit")) || 500;
  let offset = 0, shown = "";

  function pairings(status) {
    const body = $("pairings").tBodies[0];
    body.replaceChildren(...status.pairings.map(p => el("tr", {"data-pairing": p.pairing},
      el("td", {text: p.pairing + (p.sweep && p.sweep.length ? " " + JSON.stringify(p.sweep) : "")}),
      el("td", {text: p.config_hash}), el("td", {}, progress(p.done, p.planned)),
      el("td", {text: String(p.p1_wins)}), el("td", {text: String(p.p2_wins)}), el("td", {text: String(p.no_winner)}))));
  }

  function games(list) {
    const box = $("games");
    const by = new Map();
    for (const g of list) {
      const key = g.pairing + "\u0000" + g.config_hash;
      if (!by.has(key)) by.set(key, []);
      by.get(key).push(g);
    }
    const hashes = new Map();
    for (const g of list) hashes.set(g.pairing, (hashes.get(g.pairing) || new Set()).add(g.config_hash));
    box.replaceChildren();
    for (const [, gs] of by) {
      gs.sort((a, b) => a.game_index - b.game_index);
      const pairing = gs[0].pairing, several = hashes.get(pairing).size > 1;
      const line = el("div", {class: "games"}, el("h3", {text: pairing + (several ? " (settings " + gs[0].config_hash + ")" : "")}));
      for (const g of gs) {
        const mark = g.winner === "p1" ? "p1" : g.winner === "p2" ? "p2" : "draw";
        line.append(el("a", {href: gameURL(store, pairing, g.game_index, several ? g.config_hash : null),
          class: "game " + mark + (g.termination !== "victory" ? " special" : ""),
          title: "#" + g.game_index + ": " + (g.winner || "no winner") + ", " + g.termination,
          text: String(g.game_index)}));
      }
      box.append(line);
    }
  }

  function pager(data) {
    const last = Math.min(data.offset + data.games.length, data.games_total);
    const turn = (id, text, to, off) => {
      const b = el("button", {id: id, text: text});
      b.disabled = off;
      b.onclick = () => { offset = to; refresh(); };
      return b;
    };
    $("games-pages").replaceChildren(
      turn("games-prev", "‹ previous", Math.max(0, data.offset - limit), data.offset === 0), " ",
      el("span", {id: "games-range", text: "games " + (data.games_total ? data.offset + 1 : 0) + "–" + last +
                                           " of " + data.games_total}), " ",
      turn("games-next", "next ›", data.offset + limit, last >= data.games_total));
  }

  async function refresh() {
    try {
      const data = await getJSON("/api/store?" + query({store: store, offset: offset, limit: limit}));
      const s = data.status;
      $("settings").textContent = s.settings ? JSON.stringify(s.settings) : "no config.yaml: every stored game counted";
      pairings(s);
      $("warnings").replaceChildren(...(s.warnings || []).concat(s.error ? [s.error] : [])
        .map(w => el("p", {class: "error", text: w})));
      $("sprt").replaceChildren(...((s.sprt || []).length ? [el("h2", {text: "SPRT"})] : []),
        ...(s.sprt || []).map(t => el("p", {class: "sprt", text: sprtLine(t)})));
      const ff = forfeitText(s.forfeits);
      $("forfeits").replaceChildren(...(ff ? [el("h2", {text: "Forfeits"}), el("p", {text: ff})] : []));
      if (data.files.length) {
        const links = el("p", {});
        data.files.forEach((f, i) => { if (i) links.append(" · "); links.append(el("a", {href: fileURL(f), text: f})); });
        $("files").replaceChildren(el("h2", {text: "Tables and figures"}), links);
      }
      // the page this answer holds: an answer to a poll sent before the page turned holds the old
      // page and is not drawn (keyed on the request's offset, it drew the old games under the new
      // page's key, and the turned page's own answer was then never drawn)
      const page = data.offset + " " + data.games_total;
      if (data.offset === offset && page !== shown) { games(data.games); pager(data); shown = page; }
      $("updated").textContent = s.total.done + " / " + s.total.planned + " games · updated " + new Date().toLocaleTimeString();
      document.body.dataset.loaded = "1";
    } catch (err) {
      $("updated").textContent = "Cannot read the store: " + err.message;
    }
  }

  refresh();
  setInterval(refresh, 2000);
})();
