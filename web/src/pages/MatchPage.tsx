// Finding a match: FindMatch (a server stream) waits in the game's pool for players of a
// level near the player's, shows the wait and the pool's size, and opens the game page
// once matched. Cancel, or leaving the page, closes the stream: the player leaves the
// pool (docs/ratings.md, "Matchmaking").
import { useEffect, useMemo, useState } from "preact/hooks";
import { asSeat, Code, describe, gameClient, refusal, retryable, type GameClient } from "../api";
import { go, href, titleOf, useShell, type Route } from "../app";
import { NoticeBar, Panel } from "../components";
import { clockText, durationText, ms } from "../format";
import { GAMES } from "../games";
import type { MatchWaiting } from "../gen/tabletop/common/v1/matchmaking_pb";
import { TimeoutAction } from "../gen/tabletop/common/v1/table_pb";
import { freshToken, useSession } from "../player";
import { sleep } from "../watch";
import { SignInForm } from "./AccountPage";

// Seconds a decision, the table's clock: the command-line client's `match` default, so
// people matching from a terminal and from a page meet in the same pools.
export const MATCH_CLOCKS = [60, 300, 900];
export const DEFAULT_CLOCK = 300;
// A player id nobody has: GetRatings of it lists the game's shapes for a page with nobody
// signed in (every shape, each a newcomer's standing).
const NOBODY = "-";

/** The game's table shapes ("2p", "3p", "2v2"), in the game's order, as GetRatings lists them. */
export function useShapes(client: GameClient, playerId: string | undefined): string[] | undefined {
  const [shapes, setShapes] = useState<string[]>();
  useEffect(() => {
    const stop = new AbortController();
    client
      .getRatings({ playerId: playerId || NOBODY }, { signal: stop.signal, timeoutMs: 10_000 })
      .then((r) => setShapes(r.ratings.map((x) => x.shape)))
      .catch(() => {
        if (!stop.signal.aborted) setShapes([]);
      });
    return () => stop.abort();
  }, [client, playerId]);
  return shapes;
}

/** "Play rated" and "Play casual" for one game (its lobby), with the shape to play. */
export function FindMatchButtons(props: { game: string }) {
  const shell = useShell();
  const player = useSession();
  const client = useMemo(() => gameClient(GAMES[props.game]!.service, shell.transport), [props.game, shell.transport]);
  const shapes = useShapes(client, player?.playerId);
  const [shape, setShape] = useState<string>();
  const [clock, setClock] = useState(DEFAULT_CLOCK);
  const chosen = shape ?? shapes?.[0];
  const pools = shell.games?.find((g) => g.name === props.game)?.pools ?? [];
  const waiting = (rated: boolean) => pools.filter((p) => p.rated === rated && (!chosen || p.shape === chosen)).reduce((n, p) => n + p.playersWaiting, 0);
  return (
    <section class="find-match" aria-label="Find a match">
      <span class="find-match-title">Find a match</span>
      {shapes && shapes.length > 1 && (
        <label>
          table{" "}
          <select id="match-shape" value={chosen} onChange={(e) => setShape(e.currentTarget.value)}>
            {shapes.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      )}
      <label>
        clock{" "}
        <select id="match-clock" value={String(clock)} onChange={(e) => setClock(Number(e.currentTarget.value))}>
          {MATCH_CLOCKS.map((c) => (
            <option key={c} value={String(c)}>
              {durationText(c * 1000)} a move
            </option>
          ))}
        </select>
      </label>
      {[true, false].map((rated) => (
        <a
          key={String(rated)}
          class={rated ? "button primary" : "button"}
          id={rated ? "play-rated" : "play-casual"}
          href={href({ page: "match", game: props.game, rated, shape: chosen, clock: clock === DEFAULT_CLOCK ? undefined : clock })}
        >
          {rated ? "Play rated" : "Play casual"}
          {waiting(rated) > 0 && <span class="muted"> · {waiting(rated)} waiting</span>}
        </a>
      ))}
      <a href={href({ page: "leaderboard", game: props.game, shape: chosen })}>Leaderboard</a>
    </section>
  );
}

type Search =
  | { state: "asking" }
  | { state: "waiting"; waiting: MatchWaiting; since: number }
  | { state: "retrying"; why: string }
  | { state: "stopped"; why: string };

export function MatchPage(props: { route: Extract<Route, { page: "match" }> }) {
  const { route } = props;
  const shell = useShell();
  const player = useSession();
  const title = titleOf(shell, route.game);
  const clock = route.clock && route.clock > 0 ? route.clock : DEFAULT_CLOCK;
  const [search, setSearch] = useState<Search>({ state: "asking" });
  const [now, setNow] = useState(Date.now());
  const [round, setRound] = useState(0);

  useEffect(() => {
    if (!player) return;
    const stop = new AbortController();
    const client = gameClient(GAMES[route.game]!.service, shell.transport);
    void (async () => {
      for (let attempt = 0; !stop.signal.aborted; attempt++) {
        try {
          const token = await freshToken(shell.transport);
          const stream = client.findMatch(
            {
              shape: route.shape ?? "",
              rated: route.rated,
              timeControl: { perDecision: { seconds: BigInt(clock) }, onTimeout: TimeoutAction.FORFEIT },
            },
            asSeat(token, { signal: stop.signal }),
          );
          for await (const message of stream) {
            const event = message.event;
            if (event.case === "waiting") {
              attempt = 0;
              setSearch({ state: "waiting", waiting: event.value, since: Date.now() });
            } else if (event.case === "found") {
              go({ page: "game", game: route.game, gameId: event.value.gameId });
              return;
            }
          }
          // The stream ended without a match (a gateway draining): ask again, same place.
        } catch (error) {
          if (stop.signal.aborted) return;
          const r = refusal(error);
          if (r.reason === "MATCH_REPLACED") {
            setSearch({ state: "stopped", why: "You asked for a match from another tab or device: this page stopped looking." });
            return;
          }
          if (!retryable(error) || r.code === Code.Canceled) {
            setSearch({ state: "stopped", why: describe(error) });
            return;
          }
          const wait = Math.max(Number(r.metadata["retry_after_ms"] ?? 0), Math.min(10_000, 500 * 2 ** attempt));
          setSearch({ state: "retrying", why: `${describe(error)} Asking again in ${Math.max(1, Math.round(wait / 1000))} s.` });
          await sleep(wait, stop.signal);
        }
      }
    })();
    return () => stop.abort(); // leaving the page leaves the pool
  }, [player?.playerId, route.game, route.rated, route.shape, clock, round]);

  useEffect(() => {
    if (search.state !== "waiting") return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [search.state]);

  const what = `${route.rated ? "a rated" : "a casual"} ${title} game${route.shape ? ` (${route.shape})` : ""}, ${durationText(clock * 1000)} a move, out of time loses`;
  if (!player) {
    return (
      <div class="page match">
        <h1>Find {what}</h1>
        <Panel title="Sign in first">
          <SignInForm intro="Matchmaking seats signed-in players: sign in as a guest and the search starts." />
        </Panel>
      </div>
    );
  }
  return (
    <div class="page match" data-state={search.state}>
      <h1>Find {what}</h1>
      <Panel title="Looking for players" id="match-wait">
        {search.state === "asking" && <p class="muted">Joining the pool…</p>}
        {search.state === "waiting" && (
          <div class="match-wait" role="status">
            <p class="big-wait">
              Waiting <span id="match-waited">{clockText(ms(search.waiting.waited) + (now - search.since))}</span>
            </p>
            <p>
              <span id="match-pool">{search.waiting.playersWaiting}</span> {search.waiting.playersWaiting === 1 ? "player" : "players"} in this pool (you included).
              {route.rated && search.waiting.windowPoints > 0 && <> Opponents within ±{search.waiting.windowPoints} rating points of yours, widening as you wait.</>}
            </p>
            <p class="muted">The game opens here as soon as you are matched. Leaving this page leaves the pool.</p>
          </div>
        )}
        {search.state === "retrying" && <NoticeBar notice={{ tone: "warn", text: search.why }} />}
        {search.state === "stopped" && (
          <>
            <NoticeBar notice={{ tone: "error", text: search.why }} />
            <button type="button" class="primary" onClick={() => { setSearch({ state: "asking" }); setRound((n) => n + 1); }}>
              Look again
            </button>
          </>
        )}
        <p>
          <a class="button" id="match-cancel" href={href({ page: "lobby", game: route.game })}>
            {search.state === "stopped" ? "Back to the lobby" : "Cancel"}
          </a>
        </p>
      </Panel>
    </div>
  );
}
