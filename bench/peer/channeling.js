// The Channeling for boardgame.io: the peer benchmark's game (python -m bench --only peer).
//
// Why this game, and why it is comparable with our Channeling service:
// - It is the same game. The rules are a port of services/channeling/engine (the
//   rulebook's steps 1-7 as the engine reads them, the default `overchanneling`), with the
//   same components, read from services/channeling/content/components.json: 30 Magic
//   Circle cards, eight glyphs, 50 Energy Cubes a side. Random legal play takes about 75
//   decisions a game on both sides (the bench prints the mean it saw on each).
// - The same four decision kinds (moves): playGlyph, moveDruid, choosePath (only when
//   there are several shortest paths), fillGap (only when several gaps and cards remain).
// - The same hidden information: only the deck's order is secret. It is shuffled at setup
//   with boardgame.io's random API (seeded per match by the server's PRNG, whose state
//   the random plugin keeps from the clients), and playerView strips it: every player
//   and spectator sees only deckCount, as our View has deck_count.
// - Two players, each with a connection of their own, updated after every move.
//
// What differs, on purpose or by the framework:
// - Every move is `client: false`: a client cannot run them itself, since moving a Druid,
//   choosing a path or filling a gap may draw from the hidden deck. Each decision is
//   therefore a round trip to the server, as a SubmitMove is for us.
// - A client lists its legal moves from the state it holds (legalMoves below, the same
//   function the moves check with); ours asks the service (ListMoves, a server call).
// - The state sent is the framework's: the whole filtered G, ctx, plugins and the move's
//   log entry; ours sends a header, the turn with its events, and the view.
// - Seeds: our bench creates games with seeds 1, 2, ...; boardgame.io takes one per
//   match from the clock (a fixed `seed` in a game definition would deal every match
//   alike). Random deals either way: only the mean length matters here.

'use strict';

const path = require('path');
const { INVALID_MOVE } = require('boardgame.io/core');

const COMPONENTS = require(
  path.join(__dirname, '..', '..', 'services', 'channeling', 'content', 'components.json')
);
const CARDS = new Map(COMPONENTS.magic_circle_cards.map((c) => [c.id, c]));
const GLYPHS = COMPONENTS.glyphs;
const CUBES = COMPONENTS.cubes_per_colour;

// The 4x4 grid: cells 0-15 row by row, named a1 (top left) to d4 (bottom right).
const SIZE = 4;
const CELLS = [...Array(SIZE * SIZE).keys()];
const NAMES = CELLS.map((c) => 'abcd'[c % SIZE] + String(Math.floor(c / SIZE) + 1));
const ROWS = [0, 1, 2, 3].map((r) => [0, 1, 2, 3].map((c) => r * SIZE + c));
const COLS = [0, 1, 2, 3].map((c) => [0, 1, 2, 3].map((r) => r * SIZE + c));
const CENTRE = [5, 6, 9, 10]; // b2 c2 / b3 c3

const GLYPH = 'play_glyph';
const DRUID = 'move_druid';
const PATH = 'choose_path';
const FILL = 'replace_cards';
const CARDS_TO_END = 7;

const pathCache = new Map();

// Every shortest orthogonal path from start to end, both ends included, sorted.
function leylinePaths(start, end) {
  const key = start * 16 + end;
  let found = pathCache.get(key);
  if (found !== undefined) return found;
  if (start === end) {
    found = [[start]];
  } else {
    const dr = Math.floor(end / SIZE) - Math.floor(start / SIZE);
    const dc = (end % SIZE) - (start % SIZE);
    const steps = [];
    if (dr) steps.push(dr > 0 ? SIZE : -SIZE);
    if (dc) steps.push(dc > 0 ? 1 : -1);
    found = [];
    for (const step of steps) {
      for (const rest of leylinePaths(start + step, end)) found.push([start, ...rest]);
    }
    found.sort(comparePaths);
  }
  pathCache.set(key, found);
  return found;
}

function comparePaths(a, b) {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i] - b[i];
  }
  return a.length - b.length;
}

function glyphLine(G, glyph) {
  const row = G.rowGlyphs.indexOf(glyph);
  return row >= 0 ? ROWS[row] : COLS[G.colGlyphs.indexOf(glyph)];
}

// Cards of a line a Druid may move to: a card with no Druid on it.
function freeCards(G, line) {
  const occupied = [...G.druids[0], ...G.druids[1]];
  return line.filter((c) => G.grid[c] !== null && !occupied.includes(c));
}

// Glyphs in hand whose line leaves a Druid move; all of the hand when none does.
function playableGlyphs(G, seat) {
  const hand = G.hands[seat];
  const playable = hand.filter((g) => freeCards(G, glyphLine(G, g)).length > 0);
  return playable.length ? playable : [...hand];
}

// The decisions open to `seat` now, as [move name, ...args]: what a client picks from.
// It needs only what playerView shows (the deck's count, never its order).
function legalMoves(G, ctx, seat) {
  if (ctx.gameover !== undefined || String(seat) !== ctx.currentPlayer) return [];
  switch (G.step) {
    case GLYPH:
      return playableGlyphs(G, seat).map((g) => ['playGlyph', g]);
    case DRUID: {
      const targets = freeCards(G, glyphLine(G, G.glyph));
      const origins = [...G.druids[seat]].sort((a, b) => a - b);
      return origins.flatMap((o) => targets.map((t) => ['moveDruid', o, t]));
    }
    case PATH:
      return leylinePaths(G.moved, G.stationary).map((p) => ['choosePath', p]);
    case FILL:
      return [...G.gaps].sort((a, b) => a - b).map((c) => ['fillGap', c]);
    default:
      return [];
  }
}

function splendor(G, seat) {
  let total = 0;
  for (const id of G.acquired[seat]) total += CARDS.get(id).splendor;
  return total - G.overchanneling[seat];
}

function finalOutcome(G) {
  const scores = [splendor(G, 0), splendor(G, 1)];
  const cards = [G.acquired[0].length, G.acquired[1].length];
  if (scores[0] !== scores[1]) return { winner: scores[0] > scores[1] ? '0' : '1', scores };
  if (cards[0] !== cards[1]) return { winner: cards[0] < cards[1] ? '0' : '1', scores };
  return { winner: '1', scores }; // ties go to whoever went second
}

// 7 - Check for Endgame: seven cards trigger the end; the other player's turn ends it.
function endTurn(G, seat, events) {
  if (G.endTriggeredBy === null) {
    if (G.acquired[seat].length >= CARDS_TO_END) G.endTriggeredBy = seat;
  } else if (seat !== G.endTriggeredBy) {
    G.result = finalOutcome(G);
  }
  G.step = GLYPH;
  G.glyph = G.moved = G.stationary = null;
  if (G.result === null) {
    G.turn += 1;
    events.endTurn();
  }
}

// 4, 5 and 6 (acquiring) along the chosen Leyline Path.
function channel(G, seat, cells) {
  const wanted = [
    [cells[0], 3],
    [cells[cells.length - 1], 2],
    ...cells.slice(1, -1).map((c) => [c, 1]),
  ];
  for (const [cell, want] of wanted) {
    if (G.grid[cell] === null) continue;
    const count = Math.min(want, G.supply[seat]);
    G.supply[seat] -= count;
    G.cubes[cell][seat] += count;
  }
  for (const cell of cells) {
    const [light, dark] = G.cubes[cell];
    const pairs = Math.min(light, dark);
    if (pairs) {
      G.cubes[cell] = [light - pairs, dark - pairs];
      G.supply[0] += pairs;
      G.supply[1] += pairs;
    }
  }
  for (const cell of CELLS) {
    const id = G.grid[cell];
    if (id === null) continue;
    const card = CARDS.get(id);
    const mine = G.cubes[cell][seat];
    if (mine < card.vigor) continue;
    const returned = Math.min(mine, card.splendor);
    G.supply[seat] += returned;
    G.overchanneling[seat] += mine - returned;
    G.cubes[cell][seat] = 0;
    G.grid[cell] = null;
    G.acquired[seat].push(id);
    G.gaps.push(cell);
  }
}

function fill(G, cell) {
  G.grid[cell] = G.deck.pop();
  G.gaps.splice(G.gaps.indexOf(cell), 1);
}

// Refill the gaps, asking where only when it is a choice; then the turn ends.
function replaceOrAsk(G, seat, events) {
  while (G.gaps.length && G.deck.length) {
    if (G.gaps.length > 1) {
      G.step = FILL;
      return;
    }
    fill(G, G.gaps[0]);
  }
  G.gaps = [];
  endTurn(G, seat, events);
}

function afterDruid(G, seat, events) {
  const paths = leylinePaths(G.moved, G.stationary);
  if (paths.length > 1) {
    G.step = PATH;
    return;
  }
  channel(G, seat, paths[0]);
  replaceOrAsk(G, seat, events);
}

function playGlyph({ G, playerID, events }, glyph) {
  const seat = Number(playerID);
  if (G.step !== GLYPH || !playableGlyphs(G, seat).includes(glyph)) return INVALID_MOVE;
  const hand = G.hands[seat];
  hand.splice(hand.indexOf(glyph), 1);
  G.played[seat].push(glyph);
  if (!hand.length) {
    G.hands[seat] = [...G.played[seat]].sort((a, b) => a - b);
    G.played[seat] = [];
  }
  G.glyph = glyph;
  if (freeCards(G, glyphLine(G, glyph)).length) {
    G.step = DRUID;
  } else {
    endTurn(G, seat, events);
  }
}

function moveDruid({ G, playerID, events }, origin, target) {
  const seat = Number(playerID);
  const druids = G.druids[seat];
  if (G.step !== DRUID || !druids.includes(origin)) return INVALID_MOVE;
  if (!freeCards(G, glyphLine(G, G.glyph)).includes(target)) return INVALID_MOVE;
  const other = druids[0] === origin ? druids[1] : druids[0];
  druids[druids.indexOf(origin)] = target;
  G.moved = target;
  G.stationary = other;
  afterDruid(G, seat, events);
}

function choosePath({ G, playerID, events }, cells) {
  const seat = Number(playerID);
  if (G.step !== PATH || !Array.isArray(cells)) return INVALID_MOVE;
  const shortest = leylinePaths(G.moved, G.stationary);
  if (!shortest.some((p) => comparePaths(p, cells) === 0)) return INVALID_MOVE;
  channel(G, seat, cells);
  replaceOrAsk(G, seat, events);
}

function fillGap({ G, playerID, events }, cell) {
  const seat = Number(playerID);
  if (G.step !== FILL || !G.gaps.includes(cell)) return INVALID_MOVE;
  fill(G, cell);
  replaceOrAsk(G, seat, events);
}

const Channeling = {
  name: 'channeling',
  minPlayers: 2,
  maxPlayers: 2,
  setup({ random }) {
    const deck = random.Shuffle([...CARDS.keys()]);
    const green = random.Shuffle([...GLYPHS.keys()]);
    const grid = CELLS.map(() => deck.pop());
    const [b2, c2, b3, c3] = CENTRE;
    return {
      deck, // the top card is the last; secret (playerView)
      grid,
      cubes: CELLS.map(() => [0, 0]),
      druids: [
        [b2, c3],
        [c2, b3],
      ],
      rowGlyphs: green.slice(0, 4),
      colGlyphs: green.slice(4),
      hands: [[...GLYPHS.keys()], [...GLYPHS.keys()]],
      played: [[], []],
      supply: [CUBES, CUBES],
      acquired: [[], []],
      overchanneling: [0, 0],
      step: GLYPH,
      turn: 1,
      glyph: null,
      moved: null,
      stationary: null,
      gaps: [],
      endTriggeredBy: null,
      result: null,
    };
  },
  // Only the deck's order is hidden, from both players and from spectators alike.
  playerView({ G }) {
    const { deck, ...shown } = G;
    return { ...shown, deckCount: deck.length };
  },
  moves: {
    playGlyph: { move: playGlyph, client: false },
    moveDruid: { move: moveDruid, client: false },
    choosePath: { move: choosePath, client: false },
    fillGap: { move: fillGap, client: false },
  },
  endIf({ G }) {
    return G.result === null ? undefined : G.result;
  },
};

module.exports = { Channeling, legalMoves, leylinePaths, NAMES };
