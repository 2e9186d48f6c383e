// The frame every SVG board shares: a line saying whose turn it is and the step, then
// the board's panels, each an SVG that scales with its viewBox to the width it is given
// (a phone's included: no sideways scrolling), with the chooser of a selected place.
import type { ComponentChildren } from "preact";
import { GameStatus, type GameHeader } from "../../gen/tabletop/common/v1/game_pb";
import { seatLabel } from "../../format";
import { Chooser, PanelProvider, type Targets, TargetsProvider, useTargetsContext } from "./targets";

export function BoardFrame(props: {
  game: string;
  header: GameHeader;
  targets: Targets;
  /** Who decides now and what, in the game's words ("Light to play a glyph"). */
  status: ComponentChildren;
  /** Facts under the status: the turn, the deck, the end triggered... */
  facts?: ComponentChildren;
  children: ComponentChildren;
}) {
  const { header, targets } = props;
  const mine = header.viewer !== undefined && header.status === GameStatus.IN_PROGRESS && header.toAct.includes(header.viewer);
  return (
    <TargetsProvider value={targets}>
      <div class={`svg-board ${props.game}-board`} data-board={props.game}>
        <div class={mine ? "board-status mine" : "board-status"} aria-live="polite">
          <span class="board-turn">{props.status}</span>
          {mine && targets.placed > 0 && (
            <span class="board-hint">
              {targets.placed === 1 ? "Click the highlighted place" : "Click a highlighted place"}, or choose from the moves listed.
            </span>
          )}
          {props.facts && <span class="board-facts">{props.facts}</span>}
        </div>
        <div class="board-panels">{props.children}</div>
      </div>
    </TargetsProvider>
  );
}

/** "Your turn" or the seat's name, for the status line. */
export function whoActs(header: GameHeader, seats: readonly number[]): string {
  if (seats.length === 0) return "";
  return seats.map((s) => (s === header.viewer ? "you" : seatLabel(header, s))).join(" and ");
}

export function Capital(props: { text: string }) {
  const t = props.text;
  return <>{t.charAt(0).toUpperCase() + t.slice(1)}</>;
}

/** One SVG of the board. `w` and `h` are its viewBox; `wide` lets it span a row. */
export function Panel(props: { id: string; w: number; h: number; label: string; class?: string; children: ComponentChildren }) {
  const t = useTargetsContext();
  const { id, w, h } = props;
  const open = t.selected?.panel === id ? t.selected : null;
  return (
    <PanelProvider value={{ id, w, h }}>
      <figure class={props.class ? `panel-svg ${props.class}` : "panel-svg"} style={{ maxWidth: `${Math.round(w * 1.6)}px` }}>
        <svg viewBox={`0 0 ${w} ${h}`} role="group" aria-label={props.label} xmlns="http://www.w3.org/2000/svg">
          {props.children}
        </svg>
        {open && <Chooser box={open.box} w={w} h={h} place={open.place} />}
      </figure>
    </PanelProvider>
  );
}
