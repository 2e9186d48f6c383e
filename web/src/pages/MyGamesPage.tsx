// The signed-in player's games in every game service: ListMyGames (your turn first),
// kept live by WatchMyGames. The stream's first message marks "now" (a cursor, no
// event): the list is read then, and again after each event, so nothing that happens
// between the list and the stream is missed; after a drop the stream resumes from the
// last cursor and replays what was missed. The player's own moves send no event (they
// were made here or on another tab): the list is read again when the page is shown.
import { createClient } from "@connectrpc/connect";
import { useEffect, useMemo, useState } from "preact/hooks";
import { asSeat, describe, refusal, retryable } from "../api";
import { href, titleOf, useShell } from "../app";
import { Clock, NoticeBar, Panel, PlayerName, SeatRating } from "../components";
import { statusText, timeControlText } from "../format";
import { GameStatus } from "../gen/tabletop/common/v1/game_pb";
import { PlayersService, type MyGame } from "../gen/tabletop/gateway/v1/players_pb";
import { SeatState } from "../gen/tabletop/common/v1/table_pb";
import { freshToken, useSession } from "../player";
import { sleep } from "../watch";
import { SignInForm } from "./AccountPage";

interface Mine {
  games?: MyGame[];
  unavailable: string[];
  error?: string;
  live: boolean;
}

function useMyGames(includeFinished: boolean): Mine {
  const shell = useShell();
  const client = useMemo(() => createClient(PlayersService, shell.transport), [shell.transport]);
  const [mine, setMine] = useState<Mine>({ unavailable: [], live: false });
  useEffect(() => {
    const stop = new AbortController();
    let listing: Promise<void> | undefined;
    let again = false;
    // One ListMyGames at a time; events meanwhile ask for one more after it.
    const list = (): void => {
      if (listing) {
        again = true;
        return;
      }
      listing = (async () => {
        do {
          again = false;
          try {
            const token = await freshToken(shell.transport);
            const reply = await client.listMyGames({ includeFinished, pageSize: 100 }, asSeat(token, { signal: stop.signal, timeoutMs: 15_000 }));
            setMine((m) => ({ ...m, games: reply.games, unavailable: reply.unavailableServices, error: undefined }));
          } catch (error) {
            if (stop.signal.aborted) return;
            setMine((m) => ({ ...m, error: `Your games cannot be listed: ${describe(error)}` }));
          }
        } while (again && !stop.signal.aborted);
      })().finally(() => (listing = undefined));
    };
    // A move the player makes elsewhere (another tab, device) sends it no event: read
    // the list again when this page comes back into view.
    const visible = () => {
      if (document.visibilityState === "visible") list();
    };
    document.addEventListener("visibilitychange", visible);
    stop.signal.addEventListener("abort", () => document.removeEventListener("visibilitychange", visible));
    void (async () => {
      let cursor = "";
      for (let attempt = 0; !stop.signal.aborted; attempt++) {
        try {
          const token = await freshToken(shell.transport);
          for await (const message of client.watchMyGames({ cursor }, asSeat(token, { signal: stop.signal }))) {
            cursor = message.cursor || cursor;
            attempt = 0;
            setMine((m) => (m.live ? m : { ...m, live: true }));
            list(); // the first message (no event) and every event after it
          }
        } catch (error) {
          if (stop.signal.aborted) return;
          const r = refusal(error);
          setMine((m) => ({ ...m, live: false, error: retryable(error) ? undefined : `Your games are not followed live: ${describe(error)}` }));
          if (!retryable(error)) {
            list();
            return;
          }
          await sleep(Math.max(Number(r.metadata["retry_after_ms"] ?? 0), Math.min(10_000, 500 * 2 ** attempt)), stop.signal);
        }
      }
    })();
    return () => stop.abort();
  }, [client, includeFinished]);
  return mine;
}

export function MyGamesPage() {
  const player = useSession();
  const [finished, setFinished] = useState(false);
  if (!player) {
    return (
      <div class="page mine">
        <h1>My games</h1>
        <Panel title="Sign in first">
          <SignInForm intro="Your games in every game, your turn first, follow a signed-in player. Sign in as a guest:" />
        </Panel>
      </div>
    );
  }
  return <MyGamesList finished={finished} setFinished={setFinished} name={player.playerName} />;
}

function MyGamesList(props: { finished: boolean; setFinished: (on: boolean) => void; name: string }) {
  const shell = useShell();
  const mine = useMyGames(props.finished);
  const games = mine.games ?? [];
  const groups: [string, string, MyGame[]][] = [
    ["your-turn", "Your turn", games.filter((g) => g.yourTurn)],
    ["their-turn", "Others to play", games.filter((g) => !g.yourTurn && g.header?.status === GameStatus.IN_PROGRESS)],
    ["waiting", "Waiting for players", games.filter((g) => g.header?.status === GameStatus.WAITING)],
    ["finished", "Finished", games.filter((g) => g.header?.status === GameStatus.FINISHED)],
  ];
  return (
    <div class="page mine" data-live={mine.live ? "yes" : "no"}>
      <h1>My games</h1>
      <p class="muted">
        {props.name}'s games in every game, your turn first.{" "}
        <span class={mine.live ? "live-dot on" : "live-dot"}>{mine.live ? "Live." : "Connecting…"}</span>
      </p>
      <NoticeBar notice={mine.error ? { tone: "error", text: mine.error } : undefined} />
      {mine.unavailable.length > 0 && <NoticeBar notice={{ tone: "warn", text: `Not answering now, their games are missing: ${mine.unavailable.join(", ")}.` }} />}
      <label class="check">
        <input type="checkbox" id="include-finished" checked={props.finished} onChange={(e) => props.setFinished(e.currentTarget.checked)} /> show finished games
      </label>
      {!mine.games && !mine.error && <p class="muted">Asking the games…</p>}
      {mine.games && games.length === 0 && (
        <p class="muted">
          No game yet. Pick a game on the <a href="#/">games</a> page: create a table, or find a match.
        </p>
      )}
      {groups
        .filter(([, , list]) => list.length > 0)
        .map(([id, title, list]) => (
          <Panel title={title} id={id} key={id}>
            <ul class="tables my-games">
              {list.map((g) => {
                const h = g.header!;
                return (
                  <li class={g.yourTurn ? "table-row your-turn" : "table-row"} key={h.gameId} data-game-id={h.gameId}>
                    <div>
                      <a href={href({ page: "game", game: g.gameType, gameId: h.gameId })} class="my-game-link">
                        <strong>{titleOf(shell, g.gameType)}</strong> <code>{h.gameId}</code>
                      </a>{" "}
                      <span class="muted">
                        {statusText(h)}
                        {h.rated ? " · rated" : ""} · move {String(h.version)} · {timeControlText(h.timeControl)}
                      </span>
                    </div>
                    <div class="table-seats">
                      {h.seats.map((s) => (
                        <span key={s.index} class={s.index === g.seat ? "chip mine" : "chip"}>
                          <strong>{s.name}</strong> {s.state === SeatState.OPEN ? "open" : <PlayerName seat={s} />}
                          <SeatRating seat={s} />
                          {s.index === g.seat && <span> (you)</span>}
                          {h.status === GameStatus.IN_PROGRESS && h.toAct.includes(s.index) && <Clock header={h} seat={s.index} />}
                        </span>
                      ))}
                    </div>
                  </li>
                );
              })}
            </ul>
          </Panel>
        ))}
    </div>
  );
}
