// WatchGame, resumed after a drop: the stream says where it is with each message, and a
// new stream asked for `from_version` (the last version seen) sends every turn missed,
// the last with the view, then follows (tabletop/<game>/v1/<game>.proto, WatchGameRequest).
import { Code, ConnectError } from "@connectrpc/connect";
import type { GameHeader, TurnRecord } from "./gen/tabletop/common/v1/game_pb";
import { GameStatus } from "./gen/tabletop/common/v1/game_pb";
import { errorInfo } from "./api";

/** What every game's WatchGameResponse has. */
export interface Update<View = unknown> {
  game?: GameHeader;
  turn?: TurnRecord;
  view?: View;
}

export type Link =
  | { state: "connecting" }
  | { state: "live" }
  | { state: "retrying"; error: ConnectError; inMs: number; attempt: number }
  | { state: "ended" }
  | { state: "failed"; error: ConnectError };

export interface FollowOptions {
  /** The last version already seen (from GetGame); undefined: start with the view now. */
  from?: bigint;
  signal: AbortSignal;
  onLink?: (link: Link) => void;
  /** Backoff after a drop: first wait, growing twice each time up to the last. */
  firstRetryMs?: number;
  maxRetryMs?: number;
}

// A refusal that waiting will not change: stop and say so.
const FINAL = [Code.NotFound, Code.Unauthenticated, Code.PermissionDenied, Code.InvalidArgument, Code.FailedPrecondition, Code.DataLoss, Code.Unimplemented];

/** Follow a game until it is over (a finished header with its view) or `signal` aborts,
 * calling `onUpdate` with each message in order, each version once. `open` is the
 * generated client's watchGame, bound to the game and the seat's token. */
export async function follow<V>(
  open: (fromVersion: bigint | undefined, signal: AbortSignal) => AsyncIterable<Update<V>>,
  onUpdate: (update: Update<V>) => void,
  options: FollowOptions,
): Promise<void> {
  const { signal, onLink = () => {} } = options;
  const first = options.firstRetryMs ?? 500;
  const most = options.maxRetryMs ?? 5_000;
  let last = options.from;
  let attempt = 0;
  while (!signal.aborted) {
    onLink({ state: "connecting" });
    try {
      let linked = false;
      for await (const update of open(last, signal)) {
        if (!linked) {
          linked = true;
          attempt = 0;
          onLink({ state: "live" });
        }
        const version = update.turn?.version ?? update.game?.version;
        // A resumed stream repeats nothing, but a snapshot (no turn) may restate the
        // version already seen: it still carries the view.
        if (version !== undefined && last !== undefined && version < last) continue;
        if (version !== undefined) last = version;
        onUpdate(update);
        if (update.game?.status === GameStatus.FINISHED && update.view !== undefined) {
          onLink({ state: "ended" });
          return;
        }
      }
      // The stream ended without the game's end (a gateway draining): follow on.
    } catch (caught) {
      if (signal.aborted) return;
      const error = ConnectError.from(caught);
      if (error.code === Code.OutOfRange) {
        last = undefined; // from_version beyond the game (a restored store): start over
      } else if (FINAL.includes(error.code)) {
        onLink({ state: "failed", error });
        return;
      }
      attempt += 1;
      const hinted = Number(errorInfo(error)?.metadata["retry_after_ms"] ?? 0);
      const wait = Math.max(hinted, Math.min(most, first * 2 ** (attempt - 1)) * (0.75 + Math.random() / 2));
      onLink({ state: "retrying", error, inMs: wait, attempt });
      await sleep(wait, signal);
      continue;
    }
    await sleep(first, signal);
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
