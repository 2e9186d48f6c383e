// A game's lobby: the tables waiting for players (seats, clocks, options), games being
// played, a new table (seats open, yours or bots; a clock; the game's options), and
// joining a table by name; signed in, the player's token takes the seats, and a rated
// table, finding a match and the leaderboard are a click away.
import { useEffect, useMemo, useState } from "preact/hooks";
import { asSeat, describe, gameClient, type GameClient } from "../api";
import { go, href, titleOf, useShell } from "../app";
import { enumText } from "../boards/generic";
import { NoticeBar, Panel, PlayerName, SeatRating } from "../components";
import { optionsText, seatStateText, timeControlText } from "../format";
import { GAMES } from "../games";
import { GameStatus, type GameHeader } from "../gen/tabletop/common/v1/game_pb";
import { BotLevel, BotLevelSchema, SeatKind, SeatState, TimeoutAction } from "../gen/tabletop/common/v1/table_pb";
import { OptionsForm, optionsInit, type OptionValues } from "../options";
import { freshToken, useSession, type Session } from "../player";
import { keepSeats, playerName, seatsOf, setPlayerName } from "../seats";
import { FindMatchButtons } from "./MatchPage";
import { sleep } from "../watch";

const REFRESH_MS = 4000;

interface Lists {
  waiting: GameHeader[];
  playing: GameHeader[];
  finished: GameHeader[];
}

function useTables(client: GameClient): [Lists | undefined, string | undefined, () => void] {
  const [lists, setLists] = useState<Lists>();
  const [error, setError] = useState<string>();
  const [asked, setAsked] = useState(0);
  useEffect(() => {
    const stop = new AbortController();
    void (async () => {
      while (!stop.signal.aborted) {
        try {
          const options = { signal: stop.signal, timeoutMs: 10_000 };
          const [waiting, playing, finished] = await Promise.all([
            client.listGames({ status: GameStatus.WAITING, pageSize: 20 }, options),
            client.listGames({ status: GameStatus.IN_PROGRESS, pageSize: 10 }, options),
            client.listGames({ status: GameStatus.FINISHED, pageSize: 5 }, options),
          ]);
          setLists({ waiting: waiting.games, playing: playing.games, finished: finished.games });
          setError(undefined);
        } catch (e) {
          if (stop.signal.aborted) return;
          setError(describe(e));
        }
        await sleep(REFRESH_MS, stop.signal);
      }
    })();
    return () => stop.abort();
  }, [client, asked]);
  return [lists, error, () => setAsked((n) => n + 1)];
}

export function LobbyPage(props: { game: string }) {
  const shell = useShell();
  const def = GAMES[props.game]!;
  const client = useMemo(() => gameClient(def.service, shell.transport), [def, shell.transport]);
  const [lists, error, refresh] = useTables(client);
  const [name, setName] = useState(playerName());
  const [notice, setNotice] = useState<string>();
  const player = useSession();
  const entry = shell.games?.find((g) => g.name === props.game);

  async function join(gameId: string, seat?: number) {
    setNotice(undefined);
    const who = player ? player.playerName : name.trim();
    if (!who) {
      setNotice("Write your name first: the other players see it.");
      document.getElementById("your-name")?.focus();
      return;
    }
    if (!player) setPlayerName(who);
    try {
      // Signed in: the player's token takes the seat, which is then the player's on
      // every tab; no seat token to keep.
      const token = player ? await freshToken(shell.transport) : undefined;
      const joined = await client.joinGame({ gameId, seat, playerName: who }, asSeat(token, { timeoutMs: 10_000 }));
      const t = joined.seatToken!;
      if (!token) keepSeats([{ game: props.game, gameId, seat: t.seat, seatName: t.name, token: t.token, savedAt: Date.now() }]);
      go({ page: "game", game: props.game, gameId, seat: t.seat });
    } catch (e) {
      setNotice(`Joining was refused: ${describe(e)}`);
      refresh();
    }
  }

  return (
    <div class="page lobby">
      <h1>{titleOf(shell, props.game)}</h1>
      {entry && !entry.up && <NoticeBar notice={{ tone: "warn", text: "This game's service does not answer now: tables cannot be created or joined until it is back." }} />}
      <NoticeBar notice={notice ? { tone: "error", text: notice } : undefined} onClose={() => setNotice(undefined)} />
      {player ? (
        <p class="signed-in-row">
          Playing as <strong>{player.playerName}</strong> (signed in): your seats are yours on every tab.
        </p>
      ) : (
        <div class="name-row">
          <label for="your-name">Your name</label>
          <input id="your-name" maxLength={40} autoComplete="nickname" value={name} placeholder="as the other players see it" onInput={(e) => setName(e.currentTarget.value)} onChange={(e) => setPlayerName(e.currentTarget.value)} />
          <span class="muted">
            or <a href={href({ page: "account" })}>sign in</a> for rated games and matchmaking
          </span>
        </div>
      )}
      <FindMatchButtons game={props.game} />
      <div class="lobby-grid">
        <CreateTable game={props.game} client={client} name={player ? player.playerName : name} player={player} min={entry?.minPlayers ?? 2} max={entry?.maxPlayers ?? 2} />
        <div class="lobby-lists">
          <Panel title="Tables waiting for players" id="waiting">
            {error && <NoticeBar notice={{ tone: "error", text: `The tables cannot be listed: ${error}` }} />}
            {!lists && !error && <p class="muted">Asking the game service…</p>}
            {lists && lists.waiting.length === 0 && <p class="muted">No table is waiting. Create one, or open a seat for a friend.</p>}
            <ul class="tables">
              {lists?.waiting.map((h) => <TableRow key={h.gameId} game={props.game} header={h} onJoin={join} />)}
            </ul>
          </Panel>
          <Panel title="Being played" id="playing">
            {lists && lists.playing.length === 0 && <p class="muted">No game in progress.</p>}
            <ul class="tables">
              {lists?.playing.map((h) => <TableRow key={h.gameId} game={props.game} header={h} />)}
            </ul>
          </Panel>
          {lists && lists.finished.length > 0 && (
            <Panel title="Finished lately" id="finished">
              <ul class="tables">
                {lists.finished.map((h) => <TableRow key={h.gameId} game={props.game} header={h} />)}
              </ul>
            </Panel>
          )}
        </div>
      </div>
    </div>
  );
}

function TableRow(props: { game: string; header: GameHeader; onJoin?: (gameId: string, seat?: number) => void }) {
  const { header: h, game, onJoin } = props;
  const me = useSession()?.playerId;
  const held = [...seatsOf(h.gameId), ...h.seats.filter((s) => me && s.playerId === me)];
  const open = h.seats.filter((s) => s.state === SeatState.OPEN);
  const created = h.createdAt ? new Date(Number(h.createdAt.seconds) * 1000) : undefined;
  return (
    <li class="table-row" data-game-id={h.gameId}>
      <div class="table-seats">
        {h.seats.map((s) => (
          <span key={s.index} class={s.state === SeatState.OPEN ? "chip open" : "chip"}>
            <strong>{s.name}</strong> {s.state === SeatState.OPEN ? "open" : <PlayerName seat={s} />}
            <SeatRating seat={s} />
            {s.state === SeatState.BOT || s.state === SeatState.GIVEN_UP ? <span class="muted"> ({seatStateText(s)})</span> : null}
          </span>
        ))}
      </div>
      <div class="table-facts muted">
        {h.rated && <strong class="rated-tag">rated · </strong>}
        {timeControlText(h.timeControl)}
        {optionsText(h.options) && ` · ${optionsText(h.options)}`}
        {created && ` · ${created.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}`}
        {h.status === GameStatus.IN_PROGRESS && ` · move ${h.version}`}
      </div>
      <div class="table-actions">
        {held.length > 0 ? (
          <a class="button" href={href({ page: "game", game, gameId: h.gameId })}>Back to your seat</a>
        ) : (
          onJoin && open.length > 0 && (
            <button type="button" class="primary" onClick={() => onJoin(h.gameId)}>
              Join{open.length > 1 ? ` (${open.length} open)` : ` as ${open[0]!.name}`}
            </button>
          )
        )}
        <a class="button" href={href({ page: "game", game, gameId: h.gameId })}>
          Watch
        </a>
      </div>
    </li>
  );
}

type SeatChoice = { kind: "you" | "open" | "bot"; level: BotLevel };
type ClockMode = "none" | "move" | "bank";

function CreateTable(props: { game: string; client: GameClient; name: string; player?: Session; min: number; max: number }) {
  const { game, client, min, max, player } = props;
  const shell = useShell();
  const [rated, setRated] = useState(false);
  const def = GAMES[game]!;
  const [players, setPlayers] = useState(min);
  const [seats, setSeats] = useState<SeatChoice[]>(() => Array.from({ length: max }, (_, i) => ({ kind: i === 0 ? "you" : "bot", level: BotLevel.EASY })));
  const [clock, setClock] = useState<ClockMode>("none");
  const [perMove, setPerMove] = useState("60");
  const [bank, setBank] = useState("10");
  const [increment, setIncrement] = useState("5");
  const [forfeit, setForfeit] = useState(false);
  const [options, setOptions] = useState<OptionValues>({});
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  useEffect(() => setPlayers((p) => Math.min(Math.max(p, min), max)), [min, max]);
  useEffect(() => setSeats((s) => (s.length >= max ? s : [...s, ...Array.from({ length: max - s.length }, () => ({ kind: "bot" as const, level: BotLevel.EASY }))])), [max]);

  function setSeat(i: number, patch: Partial<SeatChoice>) {
    setSeats(seats.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  }

  async function create(e: Event) {
    e.preventDefault();
    setError(undefined);
    const chosen = seats.slice(0, players);
    const who = props.name.trim();
    if (rated && chosen.some((s) => s.kind === "bot")) {
      setError("A rated table seats players only: make the other seats open.");
      return;
    }
    if (!chosen.some((s) => s.kind === "you")) {
      setError("Keep at least one seat for yourself (or watch a table from the list).");
      return;
    }
    let init: Record<string, unknown>;
    try {
      init = optionsInit(def.options, options);
    } catch (problem) {
      setError((problem as Error).message);
      return;
    }
    const seconds = (text: string, scale: number) => ({ seconds: BigInt(Math.round(Number(text) * scale)) });
    const timeControl =
      clock === "none"
        ? undefined
        : {
            ...(clock === "move" ? { perDecision: seconds(perMove, 1) } : { bank: seconds(bank, 60), increment: seconds(increment, 1) }),
            onTimeout: forfeit ? TimeoutAction.FORFEIT : TimeoutAction.BOT_MOVES,
          };
    if (!player) setPlayerName(who);
    setBusy(true);
    try {
      // Signed in: the player's token takes the reserved seat.
      const token = player ? await freshToken(shell.transport) : undefined;
      const created = await client.createGame(
        {
          players,
          options: init as never,
          seats: chosen.map((s) => ({
            kind: s.kind === "you" ? SeatKind.RESERVED : s.kind === "open" ? SeatKind.OPEN : SeatKind.BOT,
            playerName: s.kind === "you" ? who : "",
            botLevel: s.kind === "bot" ? s.level : BotLevel.UNSPECIFIED,
          })),
          timeControl,
          rated: player ? rated : false,
        },
        asSeat(token, { timeoutMs: 15_000 }),
      );
      const gameId = created.game!.gameId;
      if (!token) keepSeats(created.seatTokens.map((t) => ({ game, gameId, seat: t.seat, seatName: t.name, token: t.token, savedAt: Date.now() })));
      go({ page: "game", game, gameId, seat: created.seatTokens[0]?.seat });
    } catch (problem) {
      setError(`The table was not created: ${describe(problem)}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Panel title="New table" id="new-table">
      <form class="create" onSubmit={create}>
        {min !== max && (
          <label for="players">
            Players
            <select id="players" value={String(players)} onChange={(e) => setPlayers(Number(e.currentTarget.value))}>
              {Array.from({ length: max - min + 1 }, (_, i) => min + i).map((n) => (
                <option key={n} value={String(n)}>
                  {n}
                </option>
              ))}
            </select>
          </label>
        )}
        <fieldset class="seat-choices">
          <legend>Seats</legend>
          {seats.slice(0, players).map((s, i) => (
            <div class="seat-choice" key={i}>
              <span class="seat-no">Seat {i + 1}</span>
              <select aria-label={`Seat ${i + 1}`} value={s.kind} onChange={(e) => setSeat(i, { kind: e.currentTarget.value as SeatChoice["kind"] })}>
                <option value="you">you</option>
                <option value="open">open for anyone</option>
                <option value="bot">a bot</option>
              </select>
              {s.kind === "bot" && (
                <select aria-label={`Seat ${i + 1} bot level`} value={String(s.level)} onChange={(e) => setSeat(i, { level: Number(e.currentTarget.value) })}>
                  {[BotLevel.EASY, BotLevel.MEDIUM, BotLevel.HARD].map((l) => (
                    <option key={l} value={String(l)}>
                      {enumText(BotLevelSchema, l)}
                    </option>
                  ))}
                </select>
              )}
            </div>
          ))}
        </fieldset>
        {player && (
          <label class="check">
            <input
              type="checkbox"
              id="rated"
              checked={rated}
              onChange={(e) => {
                const on = e.currentTarget.checked;
                setRated(on);
                if (on) {
                  // A rated table: players only, and a clock whose timeout loses.
                  setSeats(seats.map((s) => (s.kind === "bot" ? { ...s, kind: "open" } : s)));
                  if (clock === "none") setClock("move");
                  setForfeit(true);
                }
              }}
            />{" "}
            rated (players only, a clock that forfeits; the result moves every seat's rating)
          </label>
        )}
        <fieldset>
          <legend>Clock</legend>
          <div class="radio-row" role="radiogroup" aria-label="Clock">
            {(
              [
                ["none", "none"],
                ["move", "per move"],
                ["bank", "bank + increment"],
              ] as const
            ).map(([mode, text]) => (
              <label class="check" key={mode}>
                <input type="radio" name="clock" value={mode} checked={clock === mode} onChange={() => setClock(mode)} /> {text}
              </label>
            ))}
          </div>
          {clock === "move" && (
            <label for="per-move">
              Seconds per move
              <input id="per-move" type="number" min="1" value={perMove} onInput={(e) => setPerMove(e.currentTarget.value)} />
            </label>
          )}
          {clock === "bank" && (
            <div class="two">
              <label for="bank">
                Minutes each
                <input id="bank" type="number" min="1" value={bank} onInput={(e) => setBank(e.currentTarget.value)} />
              </label>
              <label for="increment">
                + seconds a move
                <input id="increment" type="number" min="0" value={increment} onInput={(e) => setIncrement(e.currentTarget.value)} />
              </label>
            </div>
          )}
          {clock !== "none" && (
            <label class="check">
              <input type="checkbox" checked={forfeit} onChange={(e) => setForfeit(e.currentTarget.checked)} /> out of time loses (else a bot moves for you)
            </label>
          )}
        </fieldset>
        <fieldset>
          <legend>Options</legend>
          <OptionsForm desc={def.options} values={options} onChange={setOptions} />
        </fieldset>
        {error && <NoticeBar notice={{ tone: "error", text: error }} />}
        <button type="submit" class="primary big" disabled={busy}>
          {busy ? "Creating…" : "Create table"}
        </button>
      </form>
    </Panel>
  );
}
