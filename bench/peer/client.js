// boardgame.io's own Node client driving server.js for the peer benchmark: TABLES games
// at once, closed loop, each player with its own Client (boardgame.io/client) on its own
// socket.io connection (the SocketIO multiplayer transport), as a browser tab would be.
//
//   node client.js SERVER_URL TABLES GAMES_PER_TABLE SEED
//
// Before the clock: GAMES_PER_TABLE matches per table are created and joined through the
// lobby API (credentials per player, checked by the server on every move) and both
// players' clients are connected and synced. Each table then plays its matches one after
// the other: a client moves as soon as it sees a state in which it is to act, choosing
// at random among the legal moves it lists from the state it holds. A table whose queue
// runs dry sets up another match while the clock runs (counted: late_games).
//
// Commands on stdin, one per line; answers on stdout, one JSON object per line:
//   (start)  {"event":"ready",...}       every queued match connected and synced
//   go       {"event":"going"}           the tables start playing
//   mark     {"event":"mark",...}        moves applied and updates seen so far
//   stop     {"event":"done",...}        the tables stop; every client is closed

'use strict';

const readline = require('readline');
const { Client, LobbyClient } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const { Channeling, legalMoves } = require('./channeling');

const SETUP_AT_ONCE = 16;

function rng(seed) {
  // mulberry32: a small seeded generator, so each table's choices are reproducible.
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function say(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

const counts = {
  moves: 0, // state versions applied by the server, as seen by seat 0
  updates: 0, // states delivered to a player (both seats)
  sent: 0,
  finished: 0,
  decisions: 0, // in the finished games
  late: 0,
  deckSeen: 0, // states that reached a player with the deck's order: must stay 0
};

class Match {
  constructor(server, matchID, credentials, seed) {
    this.matchID = matchID;
    this.random = rng(seed);
    this.active = false;
    this.done = false;
    this.seen = 0;
    this.acted = [-1, -1];
    this.onOver = null;
    this.clients = credentials.map((creds, seat) =>
      Client({
        game: Channeling,
        numPlayers: 2,
        multiplayer: SocketIO({ server }),
        matchID,
        playerID: String(seat),
        credentials: creds,
        debug: false,
      })
    );
    this.stamps = [-1, -1];
  }

  // Resolves once both clients hold the server's state (synced).
  connect() {
    return new Promise((resolve) => {
      let waiting = 2;
      this.clients.forEach((client, seat) => {
        client.subscribe((state) => {
          if (state === null) return;
          if (this.stamps[seat] === -1) {
            this.stamps[seat] = state._stateID;
            if (--waiting === 0) resolve();
          }
          this.onState(seat, state);
        });
        client.start();
      });
    });
  }

  onState(seat, state) {
    if (state.G.deck !== undefined) counts.deckSeen += 1;
    if (state._stateID > this.stamps[seat]) {
      this.stamps[seat] = state._stateID;
      counts.updates += 1;
      if (seat === 0 && this.active) {
        counts.moves += state._stateID - this.seen;
        this.seen = state._stateID;
      }
    }
    if (!this.active || this.done) return;
    if (state.ctx.gameover !== undefined) {
      this.done = true;
      counts.finished += 1;
      counts.decisions += state._stateID;
      setImmediate(() => this.onOver());
      return;
    }
    if (state.ctx.currentPlayer !== String(seat) || state._stateID <= this.acted[seat]) return;
    this.acted[seat] = state._stateID;
    const moves = legalMoves(state.G, state.ctx, seat);
    if (!moves.length) throw new Error(`no legal move in match ${this.matchID}`);
    const [name, ...args] = moves[Math.floor(this.random() * moves.length)];
    // Outside the subscriber's call: the move dispatches into the same store.
    setImmediate(() => {
      counts.sent += 1;
      this.clients[seat].moves[name](...args);
    });
  }

  start(onOver) {
    this.onOver = onOver;
    this.active = true;
    this.seen = this.stamps[0];
    this.clients.forEach((client, seat) => this.onState(seat, client.getState()));
  }

  stop() {
    this.active = false;
    for (const client of this.clients) client.stop();
  }
}

async function setupMatch(lobby, server, seed) {
  const { matchID } = await lobby.createMatch('channeling', { numPlayers: 2 });
  const credentials = [];
  for (const playerID of ['0', '1']) {
    const joined = await lobby.joinMatch('channeling', matchID, {
      playerID,
      playerName: `player ${playerID}`,
    });
    credentials.push(joined.playerCredentials);
  }
  const match = new Match(server, matchID, credentials, seed);
  await match.connect();
  return match;
}

class Table {
  constructor(index, queue, newMatch) {
    this.index = index;
    this.queue = queue;
    this.newMatch = newMatch;
    this.running = false;
    this.played = [];
  }

  async next() {
    if (!this.running) return;
    let match = this.queue.shift();
    if (match === undefined) {
      counts.late += 1;
      match = await this.newMatch();
      if (!this.running) {
        this.played.push(match);
        return;
      }
    }
    this.played.push(match);
    match.start(() => this.next());
  }
}

async function main() {
  const [server, tablesArg, perTableArg, seedArg] = process.argv.slice(2);
  const tables = Number(tablesArg);
  const perTable = Number(perTableArg);
  let seed = Number(seedArg) * 1000003;
  const lobby = new LobbyClient({ server });
  const newMatch = () => setupMatch(lobby, server, seed++);
  const started = Date.now();
  const queues = Array.from({ length: tables }, () => []);
  const jobs = [];
  for (let i = 0; i < perTable; i++) for (let t = 0; t < tables; t++) jobs.push(t);
  for (let i = 0; i < jobs.length; i += SETUP_AT_ONCE) {
    const batch = jobs.slice(i, i + SETUP_AT_ONCE);
    const made = await Promise.all(batch.map(() => newMatch()));
    batch.forEach((t, k) => queues[t].push(made[k]));
  }
  const all = queues.map((q, t) => new Table(t, q, newMatch));
  say({
    event: 'ready',
    matches: jobs.length,
    setup_seconds: (Date.now() - started) / 1000,
    deck_seen: counts.deckSeen,
  });
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    const command = line.trim();
    if (command === 'go') {
      for (const table of all) {
        table.running = true;
        table.next();
      }
      say({ event: 'going' });
    } else if (command === 'mark') {
      say({ event: 'mark', ...counts, seconds: (Date.now() - started) / 1000 });
    } else if (command === 'stop') {
      for (const table of all) table.running = false;
      const summary = { event: 'done', ...counts };
      for (const table of all) {
        for (const match of [...table.played, ...table.queue]) match.stop();
      }
      say(summary);
      break;
    }
  }
  lines.close();
  // Sockets are closed; leave once their last frames are out.
  setTimeout(() => process.exit(0), 200);
}

main().catch((err) => {
  say({ event: 'error', error: String(err && err.stack ? err.stack : err) });
  process.exit(1);
});
