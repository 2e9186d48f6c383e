// boardgame.io's server for the peer benchmark: its own Server (Koa, the lobby API and
// socket.io) serving The Channeling (channeling.js), as its documentation deploys it.
//
//   node server.js PORT memory            in-memory storage (boardgame.io's InMemory)
//   node server.js PORT flatfile DIR      FlatFile storage (node-persist files in DIR)
//
// FlatFile writes the match's state, metadata and whole log on every move, with
// node-persist's plain file writes (no fsync), and its default options as boardgame.io
// sets them: a write queue that writes at once when it is idle, else at its next tick
// (every second), so a match played alone advances about one move a second while many
// keep it busy. Prints "serving port=PORT" once it listens.

'use strict';

const { Server, FlatFile } = require('boardgame.io/server');
const { Channeling } = require('./channeling');

function main() {
  const [port, storage, dir] = process.argv.slice(2);
  let db;
  if (storage === 'flatfile') {
    if (!dir) throw new Error('flatfile needs a directory');
    db = new FlatFile({ dir });
  } else if (storage === 'memory') {
    delete process.env.FLATFILE_DIR; // no db given and none in the environment: InMemory
  } else {
    throw new Error(`storage must be memory or flatfile, not ${storage}`);
  }
  // Node clients send no Origin header: CORS does not apply to them.
  const server = Server({ games: [Channeling], db, origins: [] });
  server.run({ port: Number(port), callback: () => console.log(`serving port=${port}`) });
  process.on('SIGTERM', () => process.exit(0));
  process.on('SIGINT', () => process.exit(0));
}

main();
