// The experiments dashboard: every store under the root and its progress, live while a run plays:
// the server sends the listing again whenever it changes (server-sent events); polled every 2 s
// instead where the events cannot be had.
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

  function draw(data) {
    body.replaceChildren(...data.stores.map(row));
    updated.textContent = data.stores.length + " stores under " + data.root + "/ · updated " +
      new Date().toLocaleTimeString();
    document.body.dataset.loaded = "1";
  }

  async function refresh() {
    try {
      draw(await getJSON("/api/stores"));
    } catch (err) {
      updated.textContent = "Cannot read the stores: " + err.message;
    }
  }

  function poll() {
    document.body.dataset.live = "polling";
    refresh();
    setInterval(refresh, 2000);
  }

  function listen() {
    const events = new EventSource("/api/stores/events");
    events.onmessage = ev => { document.body.dataset.live = "events"; draw(JSON.parse(ev.data)); };
    // the stream ends every few minutes and the browser connects again; closed for good: poll
    events.onerror = () => { if (events.readyState === EventSource.CLOSED) poll(); };
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

  if (window.EventSource) listen(); else poll();
  reports();
})();
