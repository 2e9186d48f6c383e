// One game and table shape's leaderboard: ListLeaderboard, paged (the page token in the
// URL, so Back returns to the page before). Provisional players (fewer than ten rated
// games in the shape) are not on it: the service leaves them out.
import { useEffect, useMemo, useState } from "preact/hooks";
import { describe, gameClient } from "../api";
import { go, href, titleOf, useShell, type Route } from "../app";
import { NoticeBar, Panel } from "../components";
import { GAMES } from "../games";
import type { ListLeaderboardResponse } from "../gen/tabletop/channeling/v1/channeling_pb";
import { useSession } from "../player";
import { useShapes } from "./MatchPage";

export function LeaderboardPage(props: { route: Extract<Route, { page: "leaderboard" }> }) {
  const { route } = props;
  const shell = useShell();
  const me = useSession();
  const client = useMemo(() => gameClient(GAMES[route.game]!.service, shell.transport), [route.game, shell.transport]);
  const shapes = useShapes(client, me?.playerId);
  const [board, setBoard] = useState<ListLeaderboardResponse>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    const stop = new AbortController();
    client
      .listLeaderboard({ shape: route.shape ?? "", pageSize: route.size ?? 0, pageToken: route.pageToken ?? "" }, { signal: stop.signal, timeoutMs: 10_000 })
      .then(setBoard)
      .catch((e) => {
        if (!stop.signal.aborted) setError(describe(e));
      });
    return () => stop.abort();
  }, [client, route.shape, route.size, route.pageToken]);
  const shape = board?.shape ?? route.shape ?? "";
  const title = titleOf(shell, route.game);
  return (
    <div class="page leaderboard" data-shape={shape}>
      <h1>
        {title} leaderboard{shape && <span class="muted"> · {shape}</span>}
      </h1>
      {shapes && shapes.length > 1 && (
        <nav class="shapes" aria-label="Table shapes">
          {shapes.map((s) => (
            <a key={s} href={href({ page: "leaderboard", game: route.game, shape: s, size: route.size })} class={s === shape ? "chip current" : "chip"} aria-current={s === shape ? "page" : undefined}>
              {s}
            </a>
          ))}
        </nav>
      )}
      <NoticeBar notice={error ? { tone: "error", text: `The leaderboard cannot be read: ${error}` } : undefined} />
      <Panel title="Established players, best first" id="leaderboard">
        {!board && !error && <p class="muted">Asking…</p>}
        {board && board.entries.length === 0 && <p class="muted">Nobody has played ten rated games at this table yet: players appear here from their tenth.</p>}
        {board && board.entries.length > 0 && (
          <table class="ratings-table leaderboard-table">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">player</th>
                <th scope="col">rating</th>
                <th scope="col">rated games</th>
              </tr>
            </thead>
            <tbody>
              {board.entries.map((e) => (
                <tr key={e.playerId} class={e.playerId === me?.playerId ? "mine" : ""} data-player={e.playerId}>
                  <td>{e.rank}</td>
                  <td>
                    <a href={href({ page: "player", playerId: e.playerId, name: e.playerName })}>{e.playerName || e.playerId}</a>
                    {e.playerId === me?.playerId && <strong> (you)</strong>}
                  </td>
                  <td class="rating">{e.shown}</td>
                  <td>{e.games}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <p class="pager">
          {route.pageToken && (
            <a class="button" href={href({ ...route, shape, pageToken: undefined })}>
              ← First page
            </a>
          )}{" "}
          {board?.nextPageToken && (
            <button type="button" id="next-page" onClick={() => go({ ...route, shape, pageToken: board.nextPageToken })}>
              Next page →
            </button>
          )}
        </p>
      </Panel>
    </div>
  );
}
