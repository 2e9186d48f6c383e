// The games the gateway routes (its catalog), and the games this browser holds a seat in.
import { href, titleOf, useShell } from "../app";
import { NoticeBar, Panel } from "../components";
import { GAMES } from "../games";
import { heldGames } from "../seats";

export function HomePage() {
  const shell = useShell();
  const held = heldGames().slice(0, 12);
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
            </li>
          ))}
        </ul>
      </Panel>
      {held.length > 0 && (
        <Panel title="Your games">
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
