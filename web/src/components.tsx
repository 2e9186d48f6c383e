// Pieces the pages share: clocks drawn from the server's deadlines, the seats, notices.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { GameStatus, type GameHeader, type Seat } from "./gen/tabletop/common/v1/game_pb";
import { SeatState } from "./gen/tabletop/common/v1/table_pb";
import { at, clockText, ms, ratingText, seatStateText } from "./format";
import type { Notice } from "./game";

/** Redraw every `period` ms while `running`. */
function useNow(running: boolean, period = 100): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(Date.now()), period);
    return () => clearInterval(timer);
  }, [running, period]);
  return running ? now : Date.now();
}

/** A seat's clock: for a seat to act, the time to its deadline as the service set it
 * (the service ends the decision then, not this page); for the others, their bank. */
export function Clock(props: { header: GameHeader; seat: number }) {
  const { header, seat } = props;
  const s = header.seats[seat];
  const deadline = at(s?.deadline);
  const running = header.status === GameStatus.IN_PROGRESS && deadline > 0 && header.toAct.includes(seat);
  const now = useNow(running);
  if (!s || !header.timeControl) return null;
  if (running) {
    const left = deadline - now;
    const low = left < 10_000;
    return (
      <span class={low ? "clock running low" : "clock running"} role="timer" aria-label={`time left ${clockText(left)}`} data-deadline={deadline}>
        {left <= 0 ? "0:00.0 — time!" : clockText(left)}
      </span>
    );
  }
  const bank = ms(s.bank);
  if (!bank) return null;
  return <span class="clock">{clockText(bank)}</span>;
}

export function Seats(props: { header: GameHeader; you?: number }) {
  const { header, you } = props;
  const finished = header.status === GameStatus.FINISHED;
  return (
    <ul class="seats" aria-label="Seats">
      {header.seats.map((s) => {
        const acting = !finished && header.status === GameStatus.IN_PROGRESS && header.toAct.includes(s.index);
        const won = finished && header.outcome?.winners.includes(s.index);
        const classes = ["seat", acting && "acting", won && "won", s.index === you && "mine", s.state === SeatState.GIVEN_UP && "gone"].filter(Boolean).join(" ");
        return (
          <li class={classes} key={s.index} data-seat={s.index}>
            <span class="turn-mark" aria-hidden="true">{acting ? "▶" : won ? "★" : ""}</span>
            <span class="seat-name">{s.name}</span>
            <span class="player">
              {s.state === SeatState.OPEN ? <em>open seat</em> : <PlayerName seat={s} />}
              <SeatRating seat={s} />
              {s.index === you && <strong class="you-tag"> (you)</strong>}
              {s.state === SeatState.GIVEN_UP && <span class="muted"> · {seatStateText(s)}</span>}
            </span>
            {finished && header.outcome && <span class="score">{header.outcome.scores[s.index] ?? ""}</span>}
            <Clock header={header} seat={s.index} />
            {acting && <span class="sr-only"> to play</span>}
          </li>
        );
      })}
    </ul>
  );
}

/** A seat's player's name; a signed-in player's links to its ratings. */
export function PlayerName(props: { seat: Seat }) {
  const s = props.seat;
  if (!s.playerId) return <>{s.playerName}</>;
  return (
    <a class="player-link" href={`#/players/${encodeURIComponent(s.playerId)}?name=${encodeURIComponent(s.playerName)}`} title="This player's ratings">
      {s.playerName}
    </a>
  );
}

/** The seat's player's rating in the table's shape, as the header gives it (rated tables). */
export function SeatRating(props: { seat: Seat }) {
  const r = props.seat.rating;
  if (!r) return null;
  return (
    <span class={r.provisional ? "rating provisional" : "rating"} title={r.provisional ? "rating (provisional: fewer than ten rated games in this shape)" : "rating"}>
      {" "}
      {ratingText(r)}
    </span>
  );
}

export function NoticeBar(props: { notice?: Notice; onClose?: () => void }) {
  const n = props.notice;
  if (!n) return null;
  return (
    <div class={`notice ${n.tone}`} role={n.tone === "error" ? "alert" : "status"}>
      <span class="notice-text">{n.text}</span>
      {props.onClose && (
        <button type="button" class="link" onClick={props.onClose} aria-label="Dismiss">
          ✕
        </button>
      )}
    </div>
  );
}

export function Panel(props: { title: ComponentChildren; children: ComponentChildren; class?: string; id?: string }) {
  return (
    <section class={`panel ${props.class ?? ""}`} id={props.id} aria-label={typeof props.title === "string" ? props.title : undefined}>
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}
