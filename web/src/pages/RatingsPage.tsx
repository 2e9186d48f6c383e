// A player's ratings: GetRatings in every game the gateway routes, each shape's shown
// rating ("?" while provisional), its rated games, and openskill's mu and sigma, as the
// services send them to anyone (docs/ratings.md).
import { useEffect, useState } from "preact/hooks";
import { describe, gameClient } from "../api";
import { href, titleOf, useShell } from "../app";
import { NoticeBar, Panel } from "../components";
import { ratingText } from "../format";
import { GAMES } from "../games";
import type { ShapeRating } from "../gen/tabletop/common/v1/ratings_pb";
import { useSession } from "../player";

type Found = { ratings: ShapeRating[] } | { error: string };

export function RatingsPage(props: { playerId: string; name?: string }) {
  const shell = useShell();
  const me = useSession();
  const mine = me?.playerId === props.playerId;
  const [found, setFound] = useState<Record<string, Found>>({});
  const games = (shell.games ?? []).filter((g) => GAMES[g.name]);
  useEffect(() => {
    const stop = new AbortController();
    for (const g of games) {
      gameClient(GAMES[g.name]!.service, shell.transport)
        .getRatings({ playerId: props.playerId }, { signal: stop.signal, timeoutMs: 10_000 })
        .then((r) => setFound((f) => ({ ...f, [g.name]: { ratings: r.ratings } })))
        .catch((e) => {
          if (!stop.signal.aborted) setFound((f) => ({ ...f, [g.name]: { error: describe(e) } }));
        });
    }
    return () => stop.abort();
  }, [props.playerId, shell.transport, games.map((g) => g.name).join()]);
  const name = mine ? me!.playerName : props.name;
  return (
    <div class="page ratings">
      <h1>
        Ratings of {name ?? "a player"}
        {mine && <span class="muted"> (you)</span>}
      </h1>
      <p class="muted">
        Player <code>{props.playerId}</code>. A rating is 750 + 40 × (μ − 3σ): a newcomer shows 750, a settled average player about 1500; “?” until the tenth rated
        game in that table shape.
      </p>
      {!shell.games && <p class="muted">Asking the gateway…</p>}
      <div class="ratings-grid">
        {games.map((g) => {
          const f = found[g.name];
          return (
            <Panel title={titleOf(shell, g.name)} id={`ratings-${g.name}`} key={g.name}>
              {!f && <p class="muted">Asking…</p>}
              {f && "error" in f && <NoticeBar notice={{ tone: "error", text: f.error }} />}
              {f && "ratings" in f && (
                <table class="ratings-table">
                  <thead>
                    <tr>
                      <th scope="col">table</th>
                      <th scope="col">rating</th>
                      <th scope="col">rated games</th>
                      <th scope="col" title="openskill's skill estimate and its uncertainty">μ / σ</th>
                    </tr>
                  </thead>
                  <tbody>
                    {f.ratings.map((r) => (
                      <tr key={r.shape} data-shape={r.shape} data-games={r.games} data-shown={r.shown}>
                        <th scope="row">
                          <a href={href({ page: "leaderboard", game: g.name, shape: r.shape })}>{r.shape}</a>
                        </th>
                        <td class={r.provisional ? "rating provisional" : "rating"}>{ratingText(r)}</td>
                        <td>{r.games}</td>
                        <td class="muted">
                          {r.mu.toFixed(1)} / {r.sigma.toFixed(2)}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </Panel>
          );
        })}
      </div>
    </div>
  );
}
