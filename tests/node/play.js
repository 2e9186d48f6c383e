// A third-party client in Node.js, built from protos/ alone (and google/rpc's protos from
// third_party/googleapis to read refusals): it asks the gateway's catalog which games it
// routes, plays one game of each to the end, every seat, with random legal moves, and
// reads the ErrorInfo of a refused call out of its google.rpc.Status.
//
//     npm ci --prefix tests/node
//     node tests/node/play.js 127.0.0.1:50051 [SEED]
//
// It prints one JSON line per game played and one for the refusal; it exits 1 on
// anything unexpected. Shén games are created with a round limit so that random play
// ends (the game's own default is no limit).

"use strict";

const fs = require("node:fs");
const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");
const protobuf = require("protobufjs");

const ROOT = path.resolve(__dirname, "..", "..");
const INCLUDE = [path.join(ROOT, "protos"), path.join(ROOT, "third_party", "googleapis")];
const FINISHED = "GAME_STATUS_FINISHED";
const MAX_MOVES = 100000;
// Options a game needs so that random play ends; every other game takes its defaults.
const CREATE_OPTIONS = { shen: { roundLimit: 30 } };

function protoFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return protoFiles(full);
    return entry.name.endsWith(".proto") ? [full] : [];
  });
}

// A small seeded generator (mulberry32), so a failing run can be repeated.
function randomFrom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function lookup(root, fullName) {
  return fullName.split(".").reduce((node, part) => node[part], root);
}

function unary(client, method, request, token) {
  const metadata = new grpc.Metadata();
  if (token) metadata.set("authorization", `Bearer ${token}`);
  const deadline = new Date(Date.now() + 30000);
  return new Promise((resolve, reject) => {
    client[method](request, metadata, { deadline }, (error, reply) =>
      error ? reject(error) : resolve(reply),
    );
  });
}

// google.rpc.Status travels in the trailer grpc-status-details-bin; its details are Any
// messages, one of them a google.rpc.ErrorInfo.
function errorInfo(error, statusType, infoType) {
  const raw = error.metadata ? error.metadata.get("grpc-status-details-bin") : [];
  if (!raw.length) return null;
  const status = statusType.decode(raw[0]);
  for (const detail of status.details) {
    if (detail.type_url === `type.googleapis.com/${infoType.fullName.slice(1)}`) {
      return { status, info: infoType.toObject(infoType.decode(detail.value)) };
    }
  }
  return null;
}

async function playOne(game, client, rng) {
  const created = await unary(client, "CreateGame", {
    players: game.minPlayers,
    options: CREATE_OPTIONS[game.name] || {},
  });
  const gameId = created.game.gameId;
  const tokens = {};
  for (const seat of created.seatTokens) tokens[seat.seat] = seat.token;
  if (Object.keys(tokens).length !== game.minPlayers) {
    throw new Error(`${game.name}: ${Object.keys(tokens).length} tokens for ${game.minPlayers} seats`);
  }
  let moves = 0;
  let header = created.game;
  while (header.status !== FINISHED) {
    if (moves >= MAX_MOVES) throw new Error(`${game.name} ${gameId}: no end in ${MAX_MOVES} moves`);
    const seat = header.toAct[Math.floor(rng() * header.toAct.length)];
    const listed = await unary(client, "ListMoves", { gameId }, tokens[seat]);
    if (!listed.moves.length) throw new Error(`${game.name}: seat ${seat} is to act with no moves`);
    const move = listed.moves[Math.floor(rng() * listed.moves.length)];
    const version = listed.game.version;
    const reply = await unary(
      client,
      "SubmitMove",
      { gameId, move, expectedVersion: version, requestId: `${seat}-${version}` },
      tokens[seat],
    );
    moves += 1;
    header = reply.game;
  }
  const final = await unary(client, "GetGame", { gameId });
  return {
    game: game.name,
    gameId,
    players: game.minPlayers,
    moves,
    version: Number(final.game.version),
    status: final.game.status,
    reason: final.game.outcome.reason,
    winners: final.game.outcome.winners,
  };
}

// A move sent at a version the game has left: ABORTED, with ErrorInfo STALE_VERSION and
// the version the game is at.
async function refusedCall(game, client, rng, statusType, infoType) {
  const created = await unary(client, "CreateGame", {
    players: game.minPlayers,
    options: CREATE_OPTIONS[game.name] || {},
  });
  const gameId = created.game.gameId;
  const token = (seat) => created.seatTokens.find((t) => t.seat === seat).token;
  const seat = created.game.toAct[0];
  const listed = await unary(client, "ListMoves", { gameId }, token(seat));
  const move = listed.moves[Math.floor(rng() * listed.moves.length)];
  await unary(client, "SubmitMove", { gameId, move, expectedVersion: 0, requestId: "first" }, token(seat));
  try {
    await unary(client, "SubmitMove", { gameId, move, expectedVersion: 0, requestId: "stale" }, token(seat));
  } catch (error) {
    const found = errorInfo(error, statusType, infoType);
    if (!found) throw new Error(`the refusal carried no ErrorInfo: ${error.code} ${error.details}`);
    return {
      gameId,
      refusal: grpc.status[error.code],
      statusCode: found.status.code,
      message: found.status.message,
      reason: found.info.reason,
      domain: found.info.domain,
      metadata: found.info.metadata,
    };
  }
  throw new Error("a move at a stale version was accepted");
}

async function main() {
  const target = process.argv[2] || "127.0.0.1:50051";
  const rng = randomFrom(Number(process.argv[3] || Date.now()));
  const options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };
  const definition = protoLoader.loadSync(protoFiles(path.join(ROOT, "protos")), {
    ...options,
    includeDirs: INCLUDE,
  });
  const root = grpc.loadPackageDefinition(definition);
  const credentials = grpc.credentials.createInsecure();
  const catalog = new root.tabletop.gateway.v1.CatalogService(target, credentials);
  const listed = await unary(catalog, "ListGames", {});

  // The google.rpc messages, from the shipped .proto files (any.proto and duration.proto
  // are bundled with protobufjs).
  const rpcRoot = new protobuf.Root();
  rpcRoot.resolvePath = (_origin, target) =>
    INCLUDE.map((dir) => path.join(dir, target)).find((p) => fs.existsSync(p)) || target;
  rpcRoot.loadSync(["google/rpc/status.proto", "google/rpc/error_details.proto"], {
    keepCase: true,
  });
  const statusType = rpcRoot.lookupType("google.rpc.Status");
  const infoType = rpcRoot.lookupType("google.rpc.ErrorInfo");

  for (const game of listed.games) {
    const client = new (lookup(root, game.service))(target, credentials);
    console.log(JSON.stringify(await playOne(game, client, rng)));
    client.close();
  }
  const first = listed.games[0];
  const client = new (lookup(root, first.service))(target, credentials);
  console.log(JSON.stringify({ game: first.name, ...(await refusedCall(first, client, rng, statusType, infoType)) }));
  client.close();
  catalog.close();
}

main().catch((error) => {
  console.error(error && error.stack ? error.stack : error);
  process.exit(1);
});
