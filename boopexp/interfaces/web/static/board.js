// The boop. board as SVG: one <rect data-square="a1"> per square, one <g data-piece="b|B|r|R"> per
// piece (data-at = its square); the last move, the pieces it pushed and the group it promoted marked.
// Another game's board (drawGame): the SVG its values draw (docs/games.md "Values"), else its text board.
"use strict";

const FILES = "abcdef";
const CELL = 60;
const SVG_NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  return node;
}

function centre(square) {
  const col = FILES.indexOf(square[0]), row = 6 - Number(square[1]);
  return [CELL * col + CELL / 2 + 20, CELL * row + CELL / 2];
}

// Draw ``position`` ({board: {square: piece}}) into ``container``; ``ply`` (or null) is the move that led to it.
function drawBoard(container, position, ply) {
  const root = svg("svg", {viewBox: "0 0 " + (6 * CELL + 20) + " " + (6 * CELL + 20), class: "board",
                           role: "img", "aria-label": "boop. board"});
  const pushedTo = new Set(ply ? ply.pushes.filter(p => p[1]).map(p => p[1]) : []);
  const promoted = new Set(ply ? ply.promoted : []);
  for (let row = 0; row < 6; row++) {
    for (let col = 0; col < 6; col++) {
      const square = FILES[col] + (6 - row);
      const classes = ["square", (row + col) % 2 ? "dark" : "light"];
      if (ply && ply.square === square) classes.push("last");
      if (promoted.has(square)) classes.push("promoted");
      root.append(svg("rect", {x: 20 + col * CELL, y: row * CELL, width: CELL, height: CELL,
                               class: classes.join(" "), "data-square": square}));
    }
  }
  for (let i = 0; i < 6; i++) {
    const file = svg("text", {x: 20 + i * CELL + CELL / 2, y: 6 * CELL + 15, class: "coord"});
    file.textContent = FILES[i];
    const rank = svg("text", {x: 8, y: i * CELL + CELL / 2 + 5, class: "coord"});
    rank.textContent = String(6 - i);
    root.append(file, rank);
  }
  for (const square of promoted) {
    const [x, y] = centre(square);
    root.append(svg("circle", {cx: x, cy: y, r: 20, class: "promoted-mark", "data-promoted": square}));
  }
  for (const [square, piece] of Object.entries(position.board)) {
    const [x, y] = centre(square);
    const large = piece === piece.toUpperCase();
    const colour = piece.toLowerCase() === "b" ? "blue" : "red";
    const classes = ["piece", colour, large ? "large" : "small"];
    if (ply && ply.square === square) classes.push("placed");
    if (pushedTo.has(square)) classes.push("pushed");
    const g = svg("g", {class: classes.join(" "), "data-piece": piece, "data-at": square});
    g.append(svg("circle", {cx: x, cy: y, r: large ? 24 : 15}));
    if (large) g.append(svg("circle", {cx: x, cy: y, r: 10, class: "eye"}));
    root.append(g);
  }
  if (ply) {
    for (const [from, to] of ply.pushes) {
      const [x1, y1] = centre(from);
      let x2, y2;
      if (to) { [x2, y2] = centre(to); } else {  // pushed off the board: point past the edge
        const [px, py] = centre(ply.square);
        x2 = x1 + (x1 - px) * 0.6; y2 = y1 + (y1 - py) * 0.6;
      }
      root.append(svg("line", {x1: x1, y1: y1, x2: x2, y2: y2, class: "push" + (to ? "" : " off"),
                               "data-push": from + "-" + (to || "off")}));
    }
  }
  container.replaceChildren(root);
}

// The pools under the board: "Blue pool: 8 small, 0 large · Red pool: …".
function poolsText(position) {
  const p = position.pools;
  return "Blue pool: " + p.blue[0] + " small, " + p.blue[1] + " large · Red pool: " + p.red[0] + " small, " +
    p.red[1] + " large";
}

// Draw a position of a game other than boop. ({svg, text}) into ``container``: the game's own SVG
// picture (drawn by its Python values on the server), or its text board in a <pre> when it draws none.
function drawGame(container, position) {
  if (position.svg) {
    container.innerHTML = position.svg;
  } else {
    container.replaceChildren(el("pre", {class: "board-text", text: position.text}));
  }
}
