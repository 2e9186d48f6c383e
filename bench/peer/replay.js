// Replays games of our Channeling engine through channeling.js (tests/bench/test_peer.py):
// each from its deal, every decision's legal moves compared with the engine's, the move
// played with the port's own move functions, the final scores and winner compared.
//
//   node replay.js < games.json      prints, per game, its first difference or null
//
// A game: {deal: {deck, grid, rowGlyphs, colGlyphs}, steps: [{seat, legal, move}],
// scores, winner}, moves written as legalMoves writes them: [name, ...args].

'use strict';

const fs = require('fs');
const { Channeling, legalMoves } = require('./channeling');

const key = (value) => JSON.stringify(value);

function replay(game) {
  const G = Channeling.setup({ random: { Shuffle: (xs) => xs } });
  Object.assign(G, JSON.parse(key(game.deal)));
  const ctx = { currentPlayer: '0' };
  const events = {
    endTurn: () => {
      ctx.currentPlayer = ctx.currentPlayer === '0' ? '1' : '0';
    },
  };
  for (const [i, step] of game.steps.entries()) {
    const seat = String(step.seat);
    if (ctx.currentPlayer !== seat) return `decision ${i}: ${ctx.currentPlayer} to act, not ${seat}`;
    const ours = legalMoves(G, ctx, step.seat).map(key).sort();
    const theirs = step.legal.map(key).sort();
    if (key(ours) !== key(theirs)) return `decision ${i}: ${key(ours)} != ${key(theirs)}`;
    const [name, ...args] = step.move;
    const refused = Channeling.moves[name].move({ G, ctx, playerID: seat, events }, ...args);
    if (refused !== undefined) return `decision ${i}: ${key(step.move)} refused`;
  }
  if (G.result === null) return 'no end after the last decision';
  if (key(G.result.scores) !== key(game.scores)) {
    return `scores ${key(G.result.scores)} != ${key(game.scores)}`;
  }
  if (G.result.winner !== game.winner) return `winner ${G.result.winner} != ${game.winner}`;
  return null;
}

const games = JSON.parse(fs.readFileSync(0, 'utf8'));
console.log(JSON.stringify(games.map(replay)));
