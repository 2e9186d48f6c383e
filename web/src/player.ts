// The player signed in in this browser: a guest's token and refresh token from the
// gateway's PlayersService.SignIn (docs/players.md), kept in localStorage so every tab
// and every visit is the same player. The token (an hour by default) is refreshed
// before it expires, with the refresh token (90 days), which keeps the player id.
// Both are secrets: they stay in this browser and go only to the gateway.
import { createClient, type Transport } from "@connectrpc/connect";
import { useEffect, useState } from "preact/hooks";
import { Code, describe, refusal } from "./api";
import { at } from "./format";
import { PlayersService } from "./gen/tabletop/gateway/v1/players_pb";

export interface Session {
  playerId: string;
  playerName: string;
  token: string;
  /** When `token` expires (ms since the epoch, the gateway's clock), as SignInResponse said. */
  expiresAt: number;
  /** When this browser got it (its own clock) and how long it lasts: the refresh is
   * planned from these, so a browser whose clock is off still refreshes in time. */
  signedAt: number;
  lifeMs: number;
  refreshToken: string;
  refreshExpiresAt: number;
}

const KEY = "tabletop.player";
// Refresh when this share of the token's life is left, and at least this long before.
const REFRESH_SHARE = 0.2;
const REFRESH_LEAD_MS = 60_000;

type Listener = (s: Session | undefined, why?: string) => void;
const listeners = new Set<Listener>();
let lastSignOut: string | undefined;

function readStored(): Session | undefined {
  try {
    const text = localStorage.getItem(KEY);
    if (!text) return undefined;
    const s = JSON.parse(text) as Session;
    return typeof s.token === "string" && typeof s.playerId === "string" ? s : undefined;
  } catch {
    return undefined;
  }
}

function store(s: Session | undefined, why?: string): void {
  try {
    if (s) localStorage.setItem(KEY, JSON.stringify(s));
    else localStorage.removeItem(KEY);
  } catch {
    // storage refused: the player lasts as long as the page
  }
  memory = s;
  if (!s) lastSignOut = why;
  for (const l of listeners) l(s, why);
}

let memory: Session | undefined = readStored();

/** The player signed in now, if any (its token may be due for a refresh: freshToken). */
export function session(): Session | undefined {
  return memory;
}

/** Why the last sign-out happened, when it was not the person's own choice. */
export function signOutReason(): string | undefined {
  return lastSignOut;
}

// Another tab signed in, refreshed or signed out: follow it.
if (typeof window !== "undefined") {
  window.addEventListener("storage", (e) => {
    if (e.key !== KEY && e.key !== null) return;
    memory = readStored();
    for (const l of listeners) l(memory);
  });
}

export function subscribe(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The session for a page: redrawn when it signs in, refreshes or signs out anywhere. */
export function useSession(): Session | undefined {
  const [s, setS] = useState(memory);
  useEffect(() => subscribe((now) => setS(now)), []);
  return s;
}

/** The token's lifetime, `exp - iat` of its own claims (both the gateway's clock); else
 * what is left of it by this browser's clock. */
function lifetime(token: string, expiresAt: number): number {
  try {
    const part = token.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/");
    const claims = JSON.parse(atob(part + "=".repeat((4 - (part.length % 4)) % 4))) as { exp?: number; iat?: number };
    if (typeof claims.exp === "number" && typeof claims.iat === "number" && claims.exp > claims.iat) return (claims.exp - claims.iat) * 1000;
  } catch {
    // not a JWT we can read: fall back
  }
  return Math.max(0, expiresAt - Date.now());
}

function fromReply(reply: { token: string; playerId: string; playerName: string; refreshToken: string; expiresAt?: Parameters<typeof at>[0]; refreshExpiresAt?: Parameters<typeof at>[0] }): Session {
  return {
    playerId: reply.playerId,
    playerName: reply.playerName,
    token: reply.token,
    expiresAt: at(reply.expiresAt),
    signedAt: Date.now(),
    lifeMs: lifetime(reply.token, at(reply.expiresAt)),
    refreshToken: reply.refreshToken,
    refreshExpiresAt: at(reply.refreshExpiresAt),
  };
}

/** Sign in as a new guest named `name`. Throws the gateway's refusal. */
export async function signIn(t: Transport, name: string): Promise<Session> {
  const reply = await createClient(PlayersService, t).signIn({ playerName: name.trim() }, { timeoutMs: 10_000 });
  const s = fromReply(reply);
  store(s);
  return s;
}

/** Forget the player in this browser (every tab). */
export function signOut(why?: string): void {
  store(undefined, why);
}

/** When the session's token is due for a refresh (ms since the epoch). */
export function refreshDue(s: Session): number {
  const life = s.lifeMs ?? Math.max(0, s.expiresAt - s.signedAt);
  return s.signedAt + life - Math.max(REFRESH_LEAD_MS, life * REFRESH_SHARE);
}

/** When the token runs out, by this browser's clock. */
function runsOut(s: Session): number {
  return s.signedAt + (s.lifeMs ?? Math.max(0, s.expiresAt - s.signedAt));
}

let refreshing: Promise<Session | undefined> | undefined;

/** A new token for the same player (SignIn with the refresh token). A refresh token the
 * gateway refuses (expired, or its key changed) signs the player out, saying why; a
 * gateway that cannot be reached leaves the session as it is (tried again later). */
export function refresh(t: Transport): Promise<Session | undefined> {
  refreshing ??= (async () => {
    try {
      const before = readStored() ?? memory;
      if (!before) return undefined;
      // Another tab may have refreshed already.
      if (before.token !== memory?.token && Date.now() < refreshDue(before)) {
        memory = before;
        return before;
      }
      const reply = await createClient(PlayersService, t).signIn({ refreshToken: before.refreshToken }, { timeoutMs: 10_000 });
      const s = fromReply(reply);
      store(s);
      return s;
    } catch (error) {
      const r = refusal(error);
      if (r.code === Code.Unauthenticated || r.code === Code.InvalidArgument || r.code === Code.FailedPrecondition) {
        signOut(`your sign-in could not be renewed: ${describe(error)}. Sign in again as a guest.`);
        return undefined;
      }
      return memory;
    } finally {
      refreshing = undefined;
    }
  })();
  return refreshing;
}

/** The player's token to send now: refreshed first when it is due. Undefined: nobody is
 * signed in. */
export async function freshToken(t: Transport): Promise<string | undefined> {
  const s = memory;
  if (!s) return undefined;
  if (Date.now() >= refreshDue(s)) return (await refresh(t))?.token ?? (Date.now() < runsOut(s) ? s.token : undefined);
  return s.token;
}

/** Keep the token fresh while the page is open: a timer at the refresh's due time, and a
 * check when the page comes back into view (timers sleep with the computer). */
export function keepFresh(t: Transport): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  // After a refresh that could not reach the gateway, the next try waits this long.
  const plan = (tried = false) => {
    clearTimeout(timer);
    const s = memory;
    if (!s) return;
    const due = refreshDue(s) - Date.now();
    const wait = due > 0 ? due : tried ? 10_000 : 0;
    timer = setTimeout(() => void refresh(t).then(() => plan(true)), Math.min(wait, 2 ** 31 - 1));
  };
  const visible = () => {
    if (document.visibilityState === "visible" && memory && Date.now() >= refreshDue(memory)) void refresh(t).then(() => plan(true));
  };
  const unsubscribe = subscribe(() => plan());
  document.addEventListener("visibilitychange", visible);
  plan();
  return () => {
    clearTimeout(timer);
    unsubscribe();
    document.removeEventListener("visibilitychange", visible);
  };
}
