// Targets: the places on a board where a legal move can be made by clicking.
//
// A board names, for each legal move, the place it happens (a cell, a card, a die, a
// spot) with a string key, or none. Every place with moves is drawn as a target
// (role="button", focusable, its moves' labels as its name). One move there: a click
// (or Enter/Space) makes it. Several: the first click selects the place and a small
// chooser lists their labels, so every move stays reachable. Moves with no place stay
// in the page's list, which always lists every move.
import type { Message } from "@bufbuild/protobuf";
import type { ComponentChildren } from "preact";
import { createContext } from "preact";
import { useContext, useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { BoardProps, LegalMove } from "../types";

/** Where a move is made on the board (a key the board's drawing uses too), or none. */
export type PlaceOf<M extends Message> = (move: M, label: string) => string | undefined;

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

interface Selected {
  place: string;
  panel: string;
  box: Box;
  element: Element | null;
}

export interface Targets {
  /** The moves whose place this is (empty: not a target now). */
  at(place: string): readonly LegalMove[];
  /** Every move that has a place on the board. */
  placed: number;
  busy: boolean;
  selected: Selected | null;
  /** The move whose choice is focused or hovered in the chooser (boards may preview it). */
  preview: LegalMove | undefined;
  setPreview(move: LegalMove | undefined): void;
  press(place: string, panel: string, box: Box, element: Element | null): void;
  choose(move: LegalMove): void;
  close(): void;
}

const TargetsContext = createContext<Targets | null>(null);
const PanelContext = createContext<{ id: string; w: number; h: number } | null>(null);

export const TargetsProvider = TargetsContext.Provider;
export const PanelProvider = PanelContext.Provider;

export function useTargetsContext(): Targets {
  const t = useContext(TargetsContext);
  if (!t) throw new Error("a Target outside a board");
  return t;
}

export function usePanel(): { id: string; w: number; h: number } {
  const p = useContext(PanelContext);
  if (!p) throw new Error("a Target outside a Panel");
  return p;
}

/** The board's targets: its moves grouped by place, and which place is selected. */
export function useTargets<M extends Message>(props: BoardProps<Message, M>, placeOf: PlaceOf<M>): Targets {
  const { moves, onMove, busy } = props;
  const [selected, setSelected] = useState<Selected | null>(null);
  const [preview, setPreview] = useState<LegalMove | undefined>(undefined);
  const byPlace = useMemo(() => {
    const map = new Map<string, LegalMove[]>();
    for (const m of moves) {
      const place = placeOf(m.move, m.label);
      if (place === undefined) continue;
      const list = map.get(place);
      if (list) list.push(m);
      else map.set(place, [m]);
    }
    return map;
    // placeOf reads the view, which changes with the moves.
  }, [moves, placeOf]);
  // New moves (or none): a chooser of old ones closes.
  useEffect(() => {
    setSelected(null);
    setPreview(undefined);
  }, [moves]);
  let placed = 0;
  for (const list of byPlace.values()) placed += list.length;
  const close = () => {
    const back = selected?.element;
    setSelected(null);
    setPreview(undefined);
    if (back instanceof SVGElement || back instanceof HTMLElement) back.focus();
  };
  return {
    at: (place) => byPlace.get(place) ?? [],
    placed,
    busy,
    selected,
    preview,
    setPreview,
    press(place, panel, box, element) {
      const list = byPlace.get(place);
      if (!list || busy) return;
      if (list.length === 1) {
        setSelected(null);
        onMove(list[0]!.index);
        return;
      }
      setPreview(undefined);
      setSelected(selected?.place === place ? null : { place, panel, box, element });
    },
    choose(move) {
      setSelected(null);
      setPreview(undefined);
      if (!busy) onMove(move.index);
    },
    close,
  };
}

type Shape = { kind: "rect"; rx?: number } | { kind: "circle" };

/** A place on the board: its drawing, and when it has moves, a target over it. */
export function Target(props: {
  place: string;
  /** The place's name for a person: "card c2", "your glyph moon". */
  name: string;
  x: number;
  y: number;
  w: number;
  h: number;
  shape?: Shape;
  children?: ComponentChildren;
}) {
  const t = useTargetsContext();
  const panel = usePanel();
  const { place, name, x, y, w, h } = props;
  const moves = t.at(place);
  const shape = props.shape ?? { kind: "rect", rx: 6 };
  if (moves.length === 0) return <g data-place={place}>{props.children}</g>;
  const selected = t.selected?.place === place;
  const label = moves.length === 1 ? moves[0]!.label : `${name}: choose one of ${moves.map((m) => m.label).join(", ")}`;
  const box = { x, y, w, h };
  const press = (e: Event) => {
    e.preventDefault();
    e.stopPropagation();
    t.press(place, panel.id, box, e.currentTarget as Element);
  };
  const pad = 3;
  const outline = (cls: string) =>
    shape.kind === "circle" ? (
      <circle class={cls} cx={x + w / 2} cy={y + h / 2} r={Math.max(w, h) / 2 + pad} />
    ) : (
      <rect class={cls} x={x - pad} y={y - pad} width={w + 2 * pad} height={h + 2 * pad} rx={(shape.rx ?? 6) + pad} />
    );
  return (
    <g
      class={selected ? "target selected" : "target"}
      role="button"
      tabindex={0}
      aria-label={label}
      aria-disabled={t.busy ? "true" : undefined}
      aria-haspopup={moves.length > 1 ? "dialog" : undefined}
      aria-expanded={moves.length > 1 ? selected : undefined}
      data-place={place}
      data-moves={moves.map((m) => m.index).join(" ")}
      onClick={press}
      onKeyDown={(e) => {
        if (e.key === "Enter" || e.key === " ") press(e);
      }}
    >
      <title>{label}</title>
      {/* Under the drawing, catching clicks between its shapes; a target inside it (a
          card's power on the card) stays on top and takes its own clicks. */}
      {outline("hit-area")}
      {props.children}
      {outline("hit")}
      {moves.length > 1 && (
        <g class="count" aria-hidden="true">
          <circle cx={x + w - 1} cy={y + 1} r={8} />
          <text x={x + w - 1} y={y + 1} dy="0.35em" text-anchor="middle">
            {moves.length}
          </text>
        </g>
      )}
    </g>
  );
}

/** The chooser of a place with several moves: their labels, as buttons, over the panel. */
export function Chooser(props: { box: Box; w: number; h: number; place: string }) {
  const t = useTargetsContext();
  const moves = t.at(props.place);
  const first = useRef<HTMLButtonElement>(null);
  useEffect(() => first.current?.focus(), [props.place]);
  const { box, w, h } = props;
  const cx = ((box.x + box.w / 2) / w) * 100;
  const below = (box.y + box.h / 2) / h < 0.6;
  const style: Record<string, string> = {};
  if (cx < 34) style["left"] = `${Math.max(0, (box.x / w) * 100)}%`;
  else if (cx > 66) style["right"] = `${Math.max(0, 100 - ((box.x + box.w) / w) * 100)}%`;
  else {
    style["left"] = `${cx}%`;
    style["transform"] = "translateX(-50%)";
  }
  if (below) style["top"] = `${((box.y + box.h) / h) * 100}%`;
  else style["bottom"] = `${100 - (box.y / h) * 100}%`;
  return (
    <div
      class={below ? "chooser below" : "chooser above"}
      role="dialog"
      aria-label="Choose a move"
      style={style}
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          t.close();
        }
      }}
    >
      <ul>
        {moves.map((m, i) => (
          <li key={m.index}>
            <button
              type="button"
              class="choice"
              data-index={m.index}
              ref={i === 0 ? first : undefined}
              disabled={t.busy}
              onClick={() => t.choose(m)}
              onMouseEnter={() => t.setPreview(m)}
              onMouseLeave={() => t.setPreview(undefined)}
              onFocus={() => t.setPreview(m)}
            >
              {m.label}
            </button>
          </li>
        ))}
      </ul>
      <button type="button" class="close" aria-label="Close" onClick={() => t.close()}>
        ×
      </button>
    </div>
  );
}
