// The web app's shell: the route (in the URL's hash, so any static server serves it),
// the gateway's catalog, the player signed in (player.ts), and the pages: the games, a
// game's lobby, a game, the player's games, ratings, a leaderboard, finding a match.
import type { Transport } from "@connectrpc/connect";
import { createContext } from "preact";
import { useContext, useEffect, useMemo, useState } from "preact/hooks";
import { catalog, describe, transport } from "./api";
import { NoticeBar } from "./components";
import { GAMES } from "./games";
import type { GameType } from "./gen/tabletop/gateway/v1/catalog_pb";
import { GamePage } from "./pages/GamePage";
import { HomePage } from "./pages/HomePage";
import { LobbyPage } from "./pages/LobbyPage";
import { AccountPage, PlayerBar } from "./pages/AccountPage";
import { LeaderboardPage } from "./pages/LeaderboardPage";
import { MatchPage } from "./pages/MatchPage";
import { MyGamesPage } from "./pages/MyGamesPage";
import { RatingsPage } from "./pages/RatingsPage";
import { keepFresh, useSession } from "./player";
import { sleep } from "./watch";

export type Route =
  | { page: "home" }
  | { page: "lobby"; game: string }
  | { page: "game"; game: string; gameId: string; seat?: number }
  | { page: "account" }
  | { page: "mine" }
  | { page: "player"; playerId: string; name?: string }
  | { page: "leaderboard"; game: string; shape?: string; size?: number; pageToken?: string }
  | { page: "match"; game: string; rated: boolean; shape?: string; clock?: number }
  | { page: "unknown"; path: string };

// Pages that are not a game's: their first word is no game's name.
const ROOTS = ["account", "me", "players", "leaderboard", "match"];

export function parseRoute(hash: string): Route {
  const [path = "", query = ""] = hash.replace(/^#\/?/, "").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0) return { page: "home" };
  const q = new URLSearchParams(query);
  const text = (name: string) => q.get(name) || undefined;
  const number = (name: string) => (q.get(name) ? Number(q.get(name)) : undefined);
  if (ROOTS.includes(parts[0]!)) {
    const [root, arg] = parts as [string, string | undefined];
    if (root === "account") return { page: "account" };
    if (root === "me") return { page: "mine" };
    if (root === "players" && arg) return { page: "player", playerId: arg, name: text("name") };
    if (root === "leaderboard" && arg && GAMES[arg]) return { page: "leaderboard", game: arg, shape: text("shape"), size: number("size"), pageToken: text("page") };
    if (root === "match" && arg && GAMES[arg]) return { page: "match", game: arg, rated: q.get("rated") !== "0", shape: text("shape"), clock: number("clock") };
    return { page: "unknown", path };
  }
  const game = parts[0]!;
  if (!GAMES[game]) return { page: "unknown", path };
  if (parts.length === 1) return { page: "lobby", game };
  const seat = new URLSearchParams(query).get("seat");
  return { page: "game", game, gameId: parts[1]!, seat: seat === null ? undefined : Number(seat) };
}

export function href(route: Route): string {
  switch (route.page) {
    case "home":
      return "#/";
    case "lobby":
      return `#/${route.game}`;
    case "game":
      return `#/${route.game}/${encodeURIComponent(route.gameId)}` + (route.seat !== undefined ? `?seat=${route.seat}` : "");
    case "account":
      return "#/account";
    case "mine":
      return "#/me";
    case "player":
      return `#/players/${encodeURIComponent(route.playerId)}` + query({ name: route.name });
    case "leaderboard":
      return `#/leaderboard/${route.game}` + query({ shape: route.shape, size: route.size, page: route.pageToken });
    case "match":
      return `#/match/${route.game}` + query({ rated: route.rated ? "1" : "0", shape: route.shape, clock: route.clock });
    default:
      return "#/";
  }
}

function query(values: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== "") q.set(k, String(v));
  const text = q.toString();
  return text ? `?${text}` : "";
}

export function go(route: Route): void {
  location.hash = href(route);
}

interface Shell {
  transport: Transport;
  gateway: string;
  games: GameType[] | undefined;
  catalogError?: string;
  refreshCatalog: () => void;
}

const ShellContext = createContext<Shell | null>(null);

export function useShell(): Shell {
  const shell = useContext(ShellContext);
  if (!shell) throw new Error("outside the app");
  return shell;
}

export function titleOf(shell: Shell, game: string): string {
  return shell.games?.find((g) => g.name === game)?.title ?? game;
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(location.hash));
    window.addEventListener("hashchange", changed);
    changed(); // a change between the first render and this listener is not lost
    return () => window.removeEventListener("hashchange", changed);
  }, []);
  return route;
}

function useCatalog(t: Transport): [GameType[] | undefined, string | undefined, () => void] {
  const [games, setGames] = useState<GameType[]>();
  const [error, setError] = useState<string>();
  const [asked, setAsked] = useState(0);
  useEffect(() => {
    const stop = new AbortController();
    void (async () => {
      for (let attempt = 0; !stop.signal.aborted; attempt++) {
        try {
          const reply = await catalog(t).listGames({}, { signal: stop.signal, timeoutMs: 10_000 });
          setGames(reply.games);
          setError(undefined);
          return;
        } catch (e) {
          if (stop.signal.aborted) return;
          const wait = Math.min(10_000, 1000 * 2 ** attempt);
          setError(`${describe(e)} Trying again in ${Math.round(wait / 1000)} s.`);
          await sleep(wait, stop.signal);
        }
      }
    })();
    return () => stop.abort();
  }, [t, asked]);
  return [games, error, () => setAsked((n) => n + 1)];
}

export function App(props: { gateway: string }) {
  const t = useMemo(() => transport(props.gateway), [props.gateway]);
  const [games, catalogError, refreshCatalog] = useCatalog(t);
  const route = useRoute();
  const player = useSession();
  useEffect(() => keepFresh(t), [t]);
  const shell: Shell = { transport: t, gateway: props.gateway, games, catalogError, refreshCatalog };
  useEffect(() => {
    const title = "game" in route ? titleOf(shell, route.game) : "";
    document.title = title ? `${title} · Tabletop` : "Tabletop";
  });
  return (
    <ShellContext.Provider value={shell}>
      <header class="top">
        <a class="brand" href="#/">
          <span class="logo" aria-hidden="true">◆</span> Tabletop
        </a>
        <nav aria-label="Breadcrumbs" class="crumbs">
          {route.page === "lobby" && <span>{titleOf(shell, route.game)}</span>}
          {(route.page === "game" || route.page === "leaderboard" || route.page === "match") && <a href={href({ page: "lobby", game: route.game })}>{titleOf(shell, route.game)}</a>}
        </nav>
        <PlayerBar />
      </header>
      <main id="main">
        {route.page === "home" && <HomePage />}
        {route.page === "lobby" && <LobbyPage key={route.game} game={route.game} />}
        {route.page === "game" && <GamePage key={`${route.game}/${route.gameId}/${route.seat ?? ""}/${player?.playerId ?? ""}`} game={route.game} gameId={route.gameId} seat={route.seat} />}
        {route.page === "account" && <AccountPage />}
        {route.page === "mine" && <MyGamesPage key={player?.playerId ?? ""} />}
        {route.page === "player" && <RatingsPage key={route.playerId} playerId={route.playerId} name={route.name} />}
        {route.page === "leaderboard" && <LeaderboardPage key={`${route.game}/${route.shape ?? ""}/${route.pageToken ?? ""}`} route={route} />}
        {route.page === "match" && <MatchPage key={`${route.game}/${route.rated}/${route.shape ?? ""}/${route.clock ?? ""}/${player?.playerId ?? ""}`} route={route} />}
        {route.page === "unknown" && (
          <NoticeBar notice={{ tone: "error", text: `There is no game called “${route.path.split("/")[0]}” here.` }} />
        )}
      </main>
    </ShellContext.Provider>
  );
}
