// Small texts shared by the pages: seats, clocks, options, outcomes.
import type { JsonObject } from "@bufbuild/protobuf";
import type { Duration, Timestamp } from "@bufbuild/protobuf/wkt";
import { enumText } from "./boards/generic";
import { GameStatus, type GameHeader, type Seat } from "./gen/tabletop/common/v1/game_pb";
import { BotLevelSchema, SeatState, TimeoutAction, type TimeControl } from "./gen/tabletop/common/v1/table_pb";

export function ms(d: Duration | undefined): number {
  return d ? Number(d.seconds) * 1000 + Math.floor(d.nanos / 1e6) : 0;
}

export function at(t: Timestamp | undefined): number {
  return t ? Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6) : 0;
}

/** 83_000 -> "1:23"; under ten seconds with tenths. */
export function clockText(millis: number): string {
  const left = Math.max(0, millis);
  if (left < 10_000) return `0:0${(left / 1000).toFixed(1)}`;
  const total = Math.ceil(left / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

export function durationText(millis: number): string {
  const s = Math.round(millis / 1000);
  if (s % 86400 === 0 && s >= 86400) return `${s / 86400} d`;
  if (s % 3600 === 0 && s >= 3600) return `${s / 3600} h`;
  if (s % 60 === 0 && s >= 60) return `${s / 60} min`;
  return `${s} s`;
}

export function timeControlText(tc: TimeControl | undefined): string {
  if (!tc || (!tc.perDecision && !tc.bank)) return "no clock";
  const parts: string[] = [];
  if (tc.perDecision) parts.push(`${durationText(ms(tc.perDecision))} a move`);
  if (tc.bank) parts.push(`${durationText(ms(tc.bank))} bank` + (tc.increment && ms(tc.increment) ? ` + ${durationText(ms(tc.increment))}` : ""));
  parts.push(tc.onTimeout === TimeoutAction.FORFEIT ? "forfeit on time" : "bot moves on time");
  return parts.join(", ");
}

export function seatStateText(seat: Seat): string {
  switch (seat.state) {
    case SeatState.OPEN:
      return "open";
    case SeatState.BOT:
      return `bot (${enumText(BotLevelSchema, seat.botLevel) || "medium"})`;
    case SeatState.GIVEN_UP:
      return "gave up";
    default:
      return "";
  }
}

export function statusText(header: GameHeader): string {
  switch (header.status) {
    case GameStatus.WAITING:
      return "waiting for players";
    case GameStatus.IN_PROGRESS:
      return "in progress";
    case GameStatus.FINISHED:
      return "finished";
    default:
      return "";
  }
}

export function optionsText(options: JsonObject | undefined): string {
  if (!options) return "";
  return Object.entries(options)
    .filter(([, v]) => v !== null && v !== "" && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => `${k.replace(/_/g, " ")}: ${Array.isArray(v) ? v.join(", ") : String(v)}`)
    .join(" · ");
}

/** "Light (Ann) wins", "Light and Dark share the win", "nobody wins". */
export function outcomeText(header: GameHeader): string {
  const o = header.outcome;
  if (!o) return "";
  const names = o.winners.map((w) => seatLabel(header, w));
  if (names.length === 0) return "Nobody wins";
  if (names.length === 1) return `${names[0]} wins`;
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]} share the win`;
}

export function seatLabel(header: GameHeader, seat: number): string {
  const s = header.seats[seat];
  if (!s) return `Seat ${seat}`;
  return s.playerName && s.playerName !== s.name ? `${s.name} (${s.playerName})` : s.name;
}

export function reasonText(reason: string): string {
  return reason.toLowerCase().replace(/_/g, " ");
}

/** A rating as shown: "1520", or "750?" while provisional (docs/ratings.md). */
export function ratingText(r: { shown: number; provisional: boolean } | undefined): string {
  return r ? `${r.shown}${r.provisional ? "?" : ""}` : "";
}
