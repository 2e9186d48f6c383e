// One game page's controller: the state of a game as this browser sees it, the calls that
// change it, and the stream that keeps it live. The page (pages/GamePage.tsx) is a pure
// render of `state`, redrawn after every change.
import type { Message } from "@bufbuild/protobuf";
import type { CallOptions } from "@connectrpc/connect";
import { asSeat, Code, ConnectError, describe, type GameClient, refusal, retryable } from "./api";
import type { LegalMove } from "./boards/types";
import type { GameHeader, TurnRecord } from "./gen/tabletop/common/v1/game_pb";
import { GameStatus } from "./gen/tabletop/common/v1/game_pb";
import { forgetSeat, type HeldSeat, seatsOf } from "./seats";
import { follow, type Link, sleep, type Update } from "./watch";

export interface Notice {
  tone: "error" | "info" | "warn";
  text: string;
}

export interface FeedItem {
  key: string;
  version: bigint;
  seat?: number;
  kind: string;
  text: string;
}

export interface GameState {
  game: string;
  gameId: string;
  held: HeldSeat[];
  /** The seat this page acts for; undefined: a spectator. */
  seat?: number;
  /** The seat is the signed-in player's: the player's token acts for it (no seat token). */
  asPlayer: boolean;
  header?: GameHeader;
  view?: Message;
  moves: LegalMove[];
  history: TurnRecord[];
  feed: FeedItem[];
  link: Link;
  /** The live stream was lost and is not back yet: its last failure and next try. */
  lost?: Extract<Link, { state: "retrying" }>;
  /** No game has this id (NOT_FOUND): the page says so. */
  missing?: string;
  /** The gateway cannot be reached to load the game: the page says so and retries. */
  offline?: string;
  notice?: Notice;
  busy: boolean;
}

const FEED_SIZE = 40;
const PAGE = 1000;

function requestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return "web-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export class GameController {
  state: GameState;
  private listeners = new Set<() => void>();
  private stop = new AbortController();
  private watching?: AbortController;
  private movesAsked = -1n;

  /** The signed-in player's token was refused here: the page reads as a spectator. */
  private playerRefused = false;

  constructor(
    private client: GameClient,
    game: string,
    gameId: string,
    wantSeat?: number,
    private playerToken: () => Promise<string | undefined> = async () => undefined,
  ) {
    const held = seatsOf(gameId);
    const seat = held.find((s) => s.seat === wantSeat) ?? held[0];
    this.state = { game, gameId, held, seat: seat?.seat, asPlayer: false, moves: [], history: [], feed: [], link: { state: "connecting" }, busy: false };
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(patch: Partial<GameState>): void {
    this.state = { ...this.state, ...patch };
    for (const listener of this.listeners) listener();
  }

  private get token(): string | undefined {
    return this.state.held.find((s) => s.seat === this.state.seat)?.token;
  }

  /** Whose token goes with a call: the seat token this browser holds for the seat it
   * acts for; else the signed-in player's, which acts for the player's seat (or reads as
   * a spectator where the player holds none). */
  private async auth(extra: CallOptions): Promise<CallOptions> {
    if (this.token) return asSeat(this.token, extra);
    if (this.playerRefused) return extra;
    return asSeat(await this.playerToken(), extra);
  }

  /** After a read with the player's token: the seat it holds here, as the header says. */
  private seatFrom(header: GameHeader | undefined): Partial<GameState> {
    if (this.token || this.playerRefused || !header) return {};
    return header.viewer === undefined ? { seat: undefined, asPlayer: false } : { seat: header.viewer, asPlayer: true };
  }

  async start(): Promise<void> {
    if (!(await this.load())) return;
    this.watch();
  }

  close(): void {
    this.stop.abort();
    this.watching?.abort();
  }

  /** GetGame and the history, retried while the gateway is away. False: nothing to follow. */
  private async load(): Promise<boolean> {
    let attempt = 0;
    while (!this.stop.signal.aborted) {
      try {
        const got = await this.client.getGame({ gameId: this.state.gameId }, await this.auth({ signal: this.stop.signal }));
        this.set({ header: got.game, view: got.view, offline: undefined, ...this.seatFrom(got.game) });
        await this.loadHistory();
        await this.refreshMoves();
        return true;
      } catch (error) {
        if (this.stop.signal.aborted) return false;
        const r = refusal(error);
        if (r.code === Code.NotFound) {
          this.set({ missing: `There is no ${this.state.game} game with the id “${this.state.gameId}”.` });
          return false;
        }
        if (r.code === Code.Unauthenticated && this.token) {
          this.dropSeat(r.reason === "BAD_TOKEN" ? "the seat's token kept in this browser is not valid for this game (it was forged, or the seat was given back)" : describe(error));
          continue;
        }
        if (r.code === Code.Unauthenticated && !this.playerRefused) {
          this.refusePlayer(describe(error));
          continue;
        }
        if (!retryable(error)) {
          this.set({ notice: { tone: "error", text: describe(error) } });
          return false;
        }
        attempt += 1;
        const wait = Math.min(10_000, 500 * 2 ** attempt);
        this.set({ offline: `${describe(error)} Retrying in ${Math.round(wait / 1000)} s…` });
        await sleep(wait, this.stop.signal);
      }
    }
    return false;
  }

  private async loadHistory(): Promise<void> {
    const turns: TurnRecord[] = [];
    let from = 0n;
    for (;;) {
      const page = await this.client.getHistory({ gameId: this.state.gameId, fromVersion: from, pageSize: PAGE }, await this.auth({ signal: this.stop.signal }));
      turns.push(...page.turns);
      const last = page.turns[page.turns.length - 1];
      if (!last || page.turns.length < PAGE) break;
      from = last.version;
    }
    const known = this.state.history;
    const merged = [...turns, ...known.filter((t) => t.version > (turns[turns.length - 1]?.version ?? 0n))];
    this.set({ history: merged });
  }

  /** The stream: from the version loaded, each update applied in order. */
  private watch(): void {
    this.watching?.abort();
    const controller = new AbortController();
    this.watching = controller;
    const signal = AbortSignal.any([controller.signal, this.stop.signal]);
    const open = async function* (this: GameController, from: bigint | undefined, s: AbortSignal) {
      const options = await this.auth({ signal: s });
      yield* this.client.watchGame({ gameId: this.state.gameId, fromVersion: from }, options) as AsyncIterable<Update<Message>>;
    }.bind(this);
    void follow<Message>(
      open,
      (update) => this.apply(update),
      {
        from: this.state.header?.version,
        signal,
        onLink: (link) => this.onLink(link),
      },
    );
  }

  private onLink(link: Link): void {
    const wasDown = this.state.lost !== undefined;
    if (link.state === "retrying") this.set({ link, lost: link });
    else if (link.state === "live") this.set({ link, lost: undefined });
    else this.set({ link });
    if (link.state === "live" && wasDown) {
      this.set({ notice: { tone: "info", text: "Connection restored: the game is live again." } });
      void this.refreshMoves();
    }
    if (link.state === "failed") {
      const r = refusal(link.error);
      if (r.code === Code.Unauthenticated && this.token) {
        this.dropSeat(describe(link.error));
        this.watch();
      } else if (r.code === Code.Unauthenticated && !this.playerRefused && this.state.asPlayer) {
        this.refusePlayer(describe(link.error));
        this.watch();
      } else {
        this.set({ notice: { tone: "error", text: `The live view stopped: ${describe(link.error)}` } });
      }
    }
  }

  /** One message of the stream, or a call's answer: newer facts replace older ones. */
  private apply(update: Update<Message>): void {
    const { header, history, feed } = this.state;
    const patch: Partial<GameState> = {};
    if (update.game && (!header || update.game.version >= header.version)) {
      patch.header = update.game;
      // The moves listed were for the version before: none until the new list comes.
      if (header && update.game.version !== header.version) patch.moves = [];
    }
    if (update.view && (!header || (update.game?.version ?? 0n) >= header.version)) patch.view = update.view;
    const turn = update.turn;
    if (turn && !history.some((t) => t.version === turn.version)) {
      patch.history = [...history, turn].sort((a, b) => Number(a.version - b.version));
      const items = turn.events.filter((e) => e.text).map((e, i) => ({
        key: `${turn.version}-${i}`,
        version: turn.version,
        seat: e.seat ?? turn.seat,
        kind: e.kind,
        text: e.text,
      }));
      patch.feed = [...feed, ...items].slice(-FEED_SIZE);
    }
    this.set(patch);
    if (patch.header) void this.refreshMoves();
  }

  /** The seat's legal moves, when it has a decision at the version shown. */
  private async refreshMoves(): Promise<void> {
    const header = this.state.header;
    const seat = this.state.seat;
    const deciding = header && seat !== undefined && header.status === GameStatus.IN_PROGRESS && header.toAct.includes(seat);
    if (!header || !deciding) {
      this.movesAsked = header?.version ?? -1n;
      if (this.state.moves.length) this.set({ moves: [] });
      return;
    }
    if (this.movesAsked === header.version) return;
    this.movesAsked = header.version;
    try {
      const listed = await this.client.listMoves({ gameId: this.state.gameId }, await this.auth({ signal: this.stop.signal }));
      if (listed.game && listed.game.version !== this.state.header?.version) {
        this.movesAsked = -1n;
        return; // the game moved on meanwhile: its update asks again
      }
      this.set({ moves: listed.moves.map((move, index) => ({ index, move, label: listed.labels[index] ?? "" })) });
    } catch (error) {
      this.movesAsked = -1n;
      if (!this.stop.signal.aborted) this.set({ notice: { tone: "error", text: `Could not list your moves: ${describe(error)}` } });
    }
  }

  /** Send moves[index]; a refusal is shown with its reason. A request id makes a retry
   * after a lost answer safe: the service applies the move once. */
  async submit(index: number): Promise<void> {
    const { header, moves } = this.state;
    const chosen = moves[index];
    if (!header || !chosen || this.state.busy) return;
    this.set({ busy: true, notice: undefined });
    const id = requestId();
    for (let attempt = 0; ; attempt++) {
      try {
        const done = await this.client.submitMove(
          { gameId: this.state.gameId, move: chosen.move as never, expectedVersion: header.version, requestId: id },
          await this.auth({ signal: this.stop.signal, timeoutMs: 15_000 }),
        );
        this.set({ busy: false, moves: [] });
        this.apply({ game: done.game, turn: done.turn, view: done.view });
        return;
      } catch (error) {
        const r = refusal(error);
        if (r.code === Code.Unavailable && !r.reason && attempt < 3) {
          await sleep(500 * 2 ** attempt, this.stop.signal);
          continue;
        }
        this.set({ busy: false, notice: { tone: "error", text: `Move “${chosen.label}” refused: ${describe(error)}` } });
        if (r.reason === "STALE_VERSION") await this.reload();
        if (r.code === Code.Unauthenticated) {
          if (this.token) this.dropSeat(describe(error));
          else if (this.state.asPlayer) this.refusePlayer(describe(error));
        }
        return;
      }
    }
  }

  async resign(): Promise<void> {
    this.set({ busy: true, notice: undefined });
    try {
      const done = await this.client.resign({ gameId: this.state.gameId }, await this.auth({ signal: this.stop.signal }));
      this.set({ busy: false });
      this.apply({ game: done.game, turn: done.turn });
    } catch (error) {
      this.set({ busy: false, notice: { tone: "error", text: `Resigning was refused: ${describe(error)}` } });
    }
  }

  /** Give the seat back before the game starts. */
  async leave(): Promise<void> {
    const seat = this.state.seat;
    try {
      await this.client.leaveGame({ gameId: this.state.gameId }, await this.auth({ signal: this.stop.signal }));
      if (seat !== undefined && !this.state.asPlayer) forgetSeat(this.state.gameId, seat);
      const held = seatsOf(this.state.gameId);
      this.set({ held, seat: held[0]?.seat, asPlayer: false, notice: { tone: "info", text: "You left the table: the seat is open again." } });
      await this.reload();
      this.watch();
    } catch (error) {
      this.set({ notice: { tone: "error", text: `Leaving was refused: ${describe(error)}` } });
    }
  }

  /** Act for another of the seats this browser holds (a table with several of yours). */
  switchSeat(seat: number): void {
    if (!this.state.held.some((s) => s.seat === seat)) return;
    this.movesAsked = -1n;
    this.set({ seat, moves: [] });
    void this.reload().then(() => this.watch());
  }

  private async reload(): Promise<void> {
    try {
      const got = await this.client.getGame({ gameId: this.state.gameId }, await this.auth({ signal: this.stop.signal }));
      this.set({ header: got.game, view: got.view, ...this.seatFrom(got.game) });
      this.movesAsked = -1n;
      await this.refreshMoves();
    } catch (error) {
      if (!this.stop.signal.aborted) this.set({ notice: { tone: "error", text: describe(error) } });
    }
  }

  /** The seat's token is refused: forget it and go on as a spectator, saying why. */
  private dropSeat(why: string): void {
    const seat = this.state.seat;
    if (seat !== undefined) forgetSeat(this.state.gameId, seat);
    const held = seatsOf(this.state.gameId);
    this.movesAsked = -1n;
    this.set({
      held,
      seat: held[0]?.seat,
      moves: [],
      notice: { tone: "warn", text: `You are watching as a spectator: ${why}.` },
    });
  }

  /** The signed-in player's token is refused here (expired beyond renewal, or from a key
   * the services no longer trust): go on as a spectator, saying why. */
  private refusePlayer(why: string): void {
    this.playerRefused = true;
    this.movesAsked = -1n;
    this.set({ seat: this.token ? this.state.seat : undefined, asPlayer: false, moves: [], notice: { tone: "warn", text: `You are watching as a spectator: your sign-in was refused (${why}).` } });
  }

  dismiss(): void {
    this.set({ notice: undefined });
  }
}

export function isConnectError(error: unknown): error is ConnectError {
  return error instanceof ConnectError;
}
