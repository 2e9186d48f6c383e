// The games the gateway routes (its catalog), and the games this browser holds a seat in.
import { href, titleOf, useShell } from "../app";
import { NoticeBar, Panel } from "../components";
import { GAMES } from "../games";
import type { GameType } from "../gen/tabletop/gateway/v1/catalog_pb";
import { useSession } from "../player";
import { heldGames } from "../seats";

function waitingIn(g: GameType): number {
  return g.pools.reduce((n, p) => n + p.playersWaiting, 0);
}

export function HomePage() {
  const shell = useShell();
  const held = heldGames().slice(0, 12);
  const player = useSession();
  return (
    <div class="page home">
      <NoticeBar notice={shell.catalogError ? { tone: "error", text: `The games cannot be listed: ${shell.catalogError}` } : undefined} />
      <Panel title="Games">
        {!shell.games && !shell.catalogError && <p class="muted">Asking the gateway…</p>}
        <ul class="catalog">
          {shell.games?.map((g) => (
            <li key={g.name} class={g.up ? "game-card" : "game-card down"} data-game={g.name}>
              <a href={href({ page: "lobby", game: g.name })} class="game-link">
                <span class="game-title">{g.title}</span>
                <span class="game-facts">
                  {g.minPlayers === g.maxPlayers ? `${g.minPlayers} players` : `${g.minPlayers}–${g.maxPlayers} players`}
                  {" · "}
                  {g.up ? (g.tablesWaiting ? `${g.tablesWaiting} table${g.tablesWaiting === 1 ? "" : "s"} waiting` : "no table waiting") : "unavailable now"}
                </span>
                {!GAMES[g.name] && <span class="muted">not in this version of the app</span>}
              </a>
              {GAMES[g.name] && g.up && (
                <span class="game-actions">
                  <a href={href({ page: "match", game: g.name, rated: true })} class="play-rated">
                    Play rated
                  </a>
                  {" · "}
                  <a href={href({ page: "match", game: g.name, rated: false })} class="play-casual">
                    Play casual
                  </a>
                  {" · "}
                  <a href={href({ page: "leaderboard", game: g.name })}>Leaderboard</a>
                  {waitingIn(g) > 0 && <span class="muted"> · {waitingIn(g)} in a pool</span>}
                </span>
              )}
            </li>
          ))}
        </ul>
      </Panel>
      {player && (
        <p>
          <a class="button" href={href({ page: "mine" })}>
            {player.playerName}'s games
          </a>
        </p>
      )}
      {held.length > 0 && (
        <Panel title={player ? "Seats this browser holds" : "Your games"}>
          <ul class="plain-list">
            {held.map((seats) => {
              const first = seats[0]!;
              return (
                <li key={first.gameId}>
                  <a href={href({ page: "game", game: first.game, gameId: first.gameId })}>
                    {titleOf(shell, first.game)} <code>{first.gameId}</code>
                  </a>{" "}
                  <span class="muted">as {seats.map((s) => s.seatName).join(", ")}</span>
                </li>
              );
            })}
          </ul>
        </Panel>
      )}
    </div>
  );
}
