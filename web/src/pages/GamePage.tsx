// A game: the board, the seats and their clocks, the seat's moves, the history and what
// happens as it happens. A pure render of the controller's state (game.ts).
import { useEffect, useMemo, useState } from "preact/hooks";
import { asSeat, describe, gameClient } from "../api";
import { go, href, titleOf, useShell } from "../app";
import { NoticeBar, Panel, Seats } from "../components";
import { outcomeText, reasonText, seatLabel, statusText, timeControlText, optionsText } from "../format";
import { GameController, type GameState } from "../game";
import { GAMES } from "../games";
import { GameStatus, type GameHeader, type TurnRecord } from "../gen/tabletop/common/v1/game_pb";
import { SeatState } from "../gen/tabletop/common/v1/table_pb";
import { freshToken, useSession } from "../player";
import { keepSeats, playerName, setPlayerName } from "../seats";
import type { LegalMove } from "../boards/types";

const FILTER_FROM = 10; // moves: above this many, a filter box

function useController(game: string, gameId: string, seat?: number): [GameController, GameState] {
  const shell = useShell();
  const controller = useMemo(
    () => new GameController(gameClient(GAMES[game]!.service, shell.transport), game, gameId, seat, () => freshToken(shell.transport)),
    [game, gameId, seat, shell.transport],
  );
  const [state, setState] = useState(controller.state);
  useEffect(() => {
    const unsubscribe = controller.subscribe(() => setState(controller.state));
    setState(controller.state);
    void controller.start();
    return () => {
      unsubscribe();
      controller.close();
    };
  }, [controller]);
  return [controller, state];
}

export function GamePage(props: { game: string; gameId: string; seat?: number }) {
  const shell = useShell();
  const [controller, state] = useController(props.game, props.gameId, props.seat);
  const { header, view } = state;
  const title = titleOf(shell, props.game);

  if (state.missing) {
    return (
      <div class="page game">
        <h1>{title}</h1>
        <NoticeBar notice={{ tone: "error", text: state.missing }} />
        <p>
          <a class="button" href={href({ page: "lobby", game: props.game })}>See the tables of {title}</a>
        </p>
      </div>
    );
  }
  const Board = GAMES[props.game]!.board.Board;
  const you = state.seat;
  const finished = header?.status === GameStatus.FINISHED;
  return (
    <div class="page game" data-game-id={props.gameId} data-version={header ? String(header.version) : ""} data-status={header ? statusText(header) : "loading"}>
      <div class="game-head">
        <h1>
          {title} <code class="game-id">{props.gameId}</code>
        </h1>
        {header && (
          <p class="muted game-sub">
            <span class="status">{statusText(header)}</span> · {header.rated ? <strong class="rated-tag">rated</strong> : "casual"} · move {String(header.version)} ·{" "}
            {timeControlText(header.timeControl)}
            {optionsText(header.options) && ` · ${optionsText(header.options)}`}
          </p>
        )}
      </div>
      <NoticeBar notice={state.notice} onClose={() => controller.dismiss()} />
      {state.offline && <NoticeBar notice={{ tone: "warn", text: state.offline }} />}
      <LinkBar state={state} />
      {!header && !state.offline && !state.notice && <p class="muted">Loading the game…</p>}
      {header && finished && <Outcome header={header} />}
      {header && header.status === GameStatus.WAITING && <Waiting controller={controller} state={state} header={header} game={props.game} />}
      {header && view && (
        <div class="game-grid">
          <div class="side">
            <Panel title="Seats">
              <Seats header={header} you={you} />
              <YouAre state={state} controller={controller} header={header} />
            </Panel>
            {!finished && you !== undefined && header.status === GameStatus.IN_PROGRESS && <Moves state={state} controller={controller} header={header} />}
            <Feed state={state} header={header} />
          </div>
          <div class="board-area" aria-label="Board">
            <Board header={header} view={view} moves={state.moves} onMove={(i) => void controller.submit(i)} busy={state.busy} />
          </div>
          <History header={header} turns={state.history} />
        </div>
      )}
    </div>
  );
}

function LinkBar(props: { state: GameState }) {
  const link = props.state.lost;
  if (!link) return null;
  return (
    <div class="notice warn" role="status">
      The live connection to the game was lost ({describe(link.error)}). Reconnecting in {Math.max(1, Math.round(link.inMs / 1000))} s… (attempt {link.attempt})
    </div>
  );
}

function Outcome(props: { header: GameHeader }) {
  const o = props.header.outcome;
  if (!o) return null;
  return (
    <section class="outcome" role="status" aria-label="Outcome">
      <h2>Game over: {outcomeText(props.header)}</h2>
      <p>
        <span class="reason">{reasonText(o.reason)}</span>
        {o.scores.length > 0 && <> · {o.scores.map((s, i) => `${seatLabel(props.header, i)} ${s}`).join(" · ")}</>}
      </p>
      {o.details.length > 0 && (
        <ul class="details">
          {o.details.map((d, i) => (
            <li key={i}>{d}</li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Waiting(props: { controller: GameController; state: GameState; header: GameHeader; game: string }) {
  const { header, state, controller, game } = props;
  const open = header.seats.filter((s) => s.state === SeatState.OPEN);
  const [name, setName] = useState(playerName());
  const [error, setError] = useState<string>();
  const shell = useShell();
  const player = useSession();
  const link = location.href;
  async function join() {
    const who = player ? player.playerName : name.trim();
    if (!who) {
      setError("Write your name first: the other players see it.");
      return;
    }
    if (!player) setPlayerName(who);
    try {
      // Signed in: the player's token takes the seat (no seat token to keep).
      const token = player ? await freshToken(shell.transport) : undefined;
      const joined = await gameClient(GAMES[game]!.service, shell.transport).joinGame({ gameId: header.gameId, playerName: who }, asSeat(token, { timeoutMs: 10_000 }));
      const t = joined.seatToken!;
      if (!token) keepSeats([{ game, gameId: header.gameId, seat: t.seat, seatName: t.name, token: t.token, savedAt: Date.now() }]);
      go({ page: "game", game, gameId: header.gameId, seat: t.seat });
    } catch (e) {
      setError(`Joining was refused: ${describe(e)}`);
    }
  }
  return (
    <section class="waiting panel" aria-label="Waiting for players">
      <h2>Waiting for {open.length === 1 ? "one more player" : `${open.length} more players`}</h2>
      <p>
        The game starts when every seat is taken. Send this page's address to whoever should join:
      </p>
      <input class="share" readOnly value={link} aria-label="This table's address" onFocus={(e) => e.currentTarget.select()} />
      {header.rated && !player && <p class="muted">A rated table seats signed-in players only: <a href={href({ page: "account" })}>sign in</a> to take a seat.</p>}
      {state.seat === undefined && open.length > 0 && (
        <div class="join-row">
          {player ? (
            <span>
              As <strong>{player.playerName}</strong>
            </span>
          ) : (
            <>
              <label for="join-name">Your name</label>
              <input id="join-name" maxLength={40} value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </>
          )}
          <button type="button" class="primary" onClick={() => void join()}>
            Take a seat
          </button>
        </div>
      )}
      {state.seat !== undefined && (
        <button type="button" onClick={() => void controller.leave()}>
          Leave the table
        </button>
      )}
      {error && <NoticeBar notice={{ tone: "error", text: error }} />}
    </section>
  );
}

function YouAre(props: { state: GameState; controller: GameController; header: GameHeader }) {
  const { state, controller, header } = props;
  const [confirming, setConfirming] = useState(false);
  if (state.seat === undefined) {
    return <p class="muted you-are">You are watching as a spectator.</p>;
  }
  const mine = header.seats[state.seat];
  const playing = header.status === GameStatus.IN_PROGRESS && mine?.state === SeatState.TAKEN;
  return (
    <div class="you-are">
      {state.held.length > 1 ? (
        <label>
          Playing as{" "}
          <select value={String(state.seat)} onChange={(e) => controller.switchSeat(Number(e.currentTarget.value))}>
            {state.held.map((s) => (
              <option key={s.seat} value={String(s.seat)}>
                {header.seats[s.seat]?.name ?? s.seatName}
              </option>
            ))}
          </select>
        </label>
      ) : (
        <span>
          You play <strong>{mine?.name}</strong>.
        </span>
      )}
      {playing &&
        (confirming ? (
          <span class="confirm">
            Give up this game?{" "}
            <button type="button" class="danger" onClick={() => { setConfirming(false); void controller.resign(); }}>
              Yes, resign
            </button>{" "}
            <button type="button" onClick={() => setConfirming(false)}>
              No
            </button>
          </span>
        ) : (
          <button type="button" class="quiet" onClick={() => setConfirming(true)}>
            Resign…
          </button>
        ))}
    </div>
  );
}

function Moves(props: { state: GameState; controller: GameController; header: GameHeader }) {
  const { state, controller, header } = props;
  const [filter, setFilter] = useState("");
  const you = state.seat!;
  const yourTurn = header.toAct.includes(you);
  const shown: LegalMove[] = filter ? state.moves.filter((m) => m.label.toLowerCase().includes(filter.toLowerCase())) : state.moves;
  const others = header.toAct.filter((s) => s !== you).map((s) => seatLabel(header, s));
  return (
    <Panel title={yourTurn ? "Your move" : "Moves"} class={yourTurn ? "moves-panel your-turn" : "moves-panel"} id="moves">
      {!yourTurn && <p class="muted">{others.length ? `Waiting for ${others.join(" and ")}…` : "Waiting…"}</p>}
      {yourTurn && state.moves.length === 0 && <p class="muted">Listing your moves…</p>}
      {state.moves.length > FILTER_FROM && (
        <input class="filter" type="search" placeholder={`filter ${state.moves.length} moves`} aria-label="Filter the moves" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      )}
      {shown.length > 0 && (
        <ol class="move-list" aria-label="Legal moves">
          {shown.map((m) => (
            <li key={m.index}>
              <button type="button" class="move" data-index={m.index} disabled={state.busy} onClick={() => void controller.submit(m.index)}>
                {m.label}
              </button>
            </li>
          ))}
        </ol>
      )}
      {filter && shown.length === 0 && <p class="muted">No move matches “{filter}”.</p>}
    </Panel>
  );
}

function Feed(props: { state: GameState; header: GameHeader }) {
  const items = props.state.feed.slice(-8).reverse();
  return (
    <Panel title="What happens" class="feed" id="feed">
      <ul aria-live="polite" class="events">
        {items.length === 0 && <li class="muted">Moves and events appear here as they happen.</li>}
        {items.map((e) => (
          <li key={e.key} class={`event ${e.kind}`}>
            {e.text}
          </li>
        ))}
      </ul>
    </Panel>
  );
}

function History(props: { header: GameHeader; turns: TurnRecord[] }) {
  const turns = [...props.turns].reverse();
  return (
    <Panel title="History" class="history" id="history">
      {turns.length === 0 && <p class="muted">No move yet.</p>}
      <ol class="turns" reversed>
        {turns.map((t) => (
          <li key={String(t.version)} value={Number(t.version)}>
            <span class="who">{props.header.seats[t.seat]?.name ?? `seat ${t.seat}`}</span>{" "}
            <span class="what">{t.moveText.startsWith("@") ? <em>{t.moveText.slice(1)}</em> : t.moveText || <em>a hidden move</em>}</span>
            {t.events.filter((e) => e.text).length > 0 && (
              <ul class="turn-events">
                {t.events.filter((e) => e.text).map((e, i) => (
                  <li key={i}>{e.text}</li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ol>
    </Panel>
  );
}
