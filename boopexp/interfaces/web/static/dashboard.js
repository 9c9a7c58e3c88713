// The experiments dashboard: every store under the root and its progress, polled every 2 s so a
// run in progress shows live.
"use strict";

(function () {
  const body = document.querySelector("#stores tbody");
  const updated = document.getElementById("updated");

  function row(s) {
    const cells = [el("td", {}, el("a", {href: storeURL(s.folder), text: s.folder}))];
    cells.push(el("td", {text: s.settings ? s.settings.name || "" : ""}));
    cells.push(el("td", {}, progress(s.total.done, s.total.planned)));
    cells.push(el("td", {text: String(s.total.done)}));
    cells.push(el("td", {text: String(s.pairings.length)}));
    cells.push(el("td", {text: (s.sprt || []).map(t => t.first + "–" + t.second + ": " + t.decision).join("; ")}));
    cells.push(el("td", {text: s.error ? "error: " + s.error : forfeitText(s.forfeits)}));
    // short of its plan: still running or stopped early (an SPRT that decided stops its pairings)
    const decided = (s.sprt || []).length > 0 && s.sprt.every(t => t.decision !== "running");
    const short = s.total.done < s.total.planned;
    return el("tr", {"data-store": s.folder, class: short ? (decided ? "decided" : "running") : "",
                     title: short ? (decided ? "stopped by its SPRT" : "short of its plan: running, or stopped") : null},
              ...cells);
  }

  async function refresh() {
    try {
      const data = await getJSON("/api/stores");
      body.replaceChildren(...data.stores.map(row));
      updated.textContent = data.stores.length + " stores under " + data.root + "/ · updated " +
        new Date().toLocaleTimeString();
      document.body.dataset.loaded = "1";
    } catch (err) {
      updated.textContent = "Cannot read the stores: " + err.message;
    }
  }

  async function reports() {
    const data = await getJSON("/api/reports");
    const box = document.getElementById("reports");
    for (const r of data.reports) {
      const links = r.files.map(f => el("a", {href: fileURL(f), text: f.split("/").pop()}));
      const line = el("p", {}, el("strong", {text: r.folder + "/ "}));
      links.forEach((a, i) => { if (i) line.append(" · "); line.append(a); });
      box.append(line);
    }
  }

  refresh();
  reports();
  setInterval(refresh, 2000);
})();
