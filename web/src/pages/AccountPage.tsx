// Signing in as a guest (PlayersService.SignIn), who is signed in, and signing out; the
// header's player bar on every page.
import { useState } from "preact/hooks";
import { describe } from "../api";
import { href, useShell } from "../app";
import { NoticeBar, Panel } from "../components";
import { signIn, signOut, signOutReason, useSession } from "../player";
import { playerName, setPlayerName } from "../seats";

export function PlayerBar() {
  const s = useSession();
  return (
    <nav class="player-bar" aria-label="Player">
      {s ? (
        <>
          <a href={href({ page: "mine" })} id="my-games-link">
            My games
          </a>
          <a href={href({ page: "account" })} class="signed-in" title="Your sign-in">
            <span aria-hidden="true">●</span> {s.playerName}
          </a>
        </>
      ) : (
        <a href={href({ page: "account" })} id="sign-in-link">
          Sign in
        </a>
      )}
    </nav>
  );
}

/** A name and a button: a new guest. `then` runs once signed in. */
export function SignInForm(props: { then?: () => void; intro?: string }) {
  const shell = useShell();
  const [name, setName] = useState(playerName());
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    const who = name.trim();
    if (!who) {
      setError("Write a name first: the other players see it.");
      return;
    }
    setBusy(true);
    try {
      await signIn(shell.transport, who);
      setPlayerName(who);
      props.then?.();
    } catch (problem) {
      setError(`Signing in was refused: ${describe(problem)}`);
    } finally {
      setBusy(false);
    }
  }
  return (
    <form class="sign-in" onSubmit={submit} aria-label="Sign in as a guest">
      {props.intro && <p>{props.intro}</p>}
      <label for="guest-name">Your name</label>
      <input id="guest-name" maxLength={40} autoComplete="nickname" value={name} placeholder="as the other players see it" onInput={(e) => setName(e.currentTarget.value)} />
      <button type="submit" class="primary" disabled={busy}>
        {busy ? "Signing in…" : "Sign in as a guest"}
      </button>
      {error && <NoticeBar notice={{ tone: "error", text: error }} />}
    </form>
  );
}

export function AccountPage() {
  const s = useSession();
  const [confirming, setConfirming] = useState(false);
  const why = signOutReason();
  if (!s) {
    return (
      <div class="page account">
        <h1>Sign in</h1>
        {why && <NoticeBar notice={{ tone: "warn", text: `You were signed out: ${why}` }} />}
        <Panel title="Play as a guest">
          <SignInForm
            intro="A guest is a player with a name and no password: your seats, rated games and ratings follow you on every tab of this browser. Without signing in you can still play: each seat is then kept by this browser alone."
          />
        </Panel>
      </div>
    );
  }
  return (
    <div class="page account">
      <h1>{s.playerName}</h1>
      <Panel title="Signed in">
        <dl class="facts">
          <dt>Name</dt>
          <dd id="account-name">{s.playerName}</dd>
          <dt>Player id</dt>
          <dd>
            <code id="account-id">{s.playerId}</code>
          </dd>
          <dt>This sign-in</dt>
          <dd>renewed by itself while a page is open (next: before {new Date(s.expiresAt).toLocaleTimeString()}); usable to come back until {new Date(s.refreshExpiresAt).toLocaleDateString()}</dd>
        </dl>
        <p>
          <a class="button" href={href({ page: "mine" })}>My games</a>{" "}
          <a class="button" href={href({ page: "player", playerId: s.playerId, name: s.playerName })}>My ratings</a>
        </p>
        {confirming ? (
          <p class="confirm">
            Signing out makes this browser forget {s.playerName}. A guest has no password: you could not sign in as {s.playerName} again, and the games
            you play as {s.playerName} would go on without you.{" "}
            <button type="button" class="danger" onClick={() => signOut()}>
              Sign out
            </button>{" "}
            <button type="button" onClick={() => setConfirming(false)}>
              Stay
            </button>
          </p>
        ) : (
          <button type="button" class="quiet" onClick={() => setConfirming(true)}>
            Sign out…
          </button>
        )}
      </Panel>
    </div>
  );
}
