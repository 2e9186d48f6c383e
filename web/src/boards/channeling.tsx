// The Channeling's board: the 4x4 grid of Magic Circle Cards (Vigor as outer circles,
// Splendor as petals) with the green Glyph Cards labelling its rows and columns and the
// deck in the corner, the Energy Cubes and Druid Tokens on the cards; then Light's and
// Dark's glyph hands, played glyphs, acquired cards, supply, Overchanneling and Splendor.
//
// Targets: a card a Druid may move to (`druid a1-b1`), a gap to fill (`fill c2`), the
// cell that tells a Leyline Path from the others (`path ...`, previewed on the grid), and
// a Glyph Card in the viewer's hand (`glyph moon`).
import { useCallback, useMemo } from "preact/hooks";
import { GameStatus } from "../gen/tabletop/common/v1/game_pb";
import { ViewSchema, Step, type Card, type Cell, type Move, type View } from "../gen/tabletop/channeling/v1/channeling_pb";
import { BoardFrame, Capital, Panel } from "./svg/frame";
import { Icon } from "./svg/icons";
import { Target, useTargets, useTargetsContext } from "./svg/targets";
import type { BoardModule, BoardProps } from "./types";

const SEATS = ["Light", "Dark"];
const STEPS: Record<number, string> = {
  [Step.PLAY_GLYPH]: "play a Glyph Card",
  [Step.MOVE_DRUID]: "move a Druid Token",
  [Step.CHOOSE_PATH]: "choose a Leyline Path",
  [Step.REPLACE_CARDS]: "replace the acquired cards",
};

// The grid's geometry (viewBox units).
const M = 6; // margin
const G = 46; // the glyph labels' depth
const GAP = 6;
const C = 88; // a Magic Circle Card
const GRID = M + G + GAP + 4 * C + 3 * GAP + M;

function cellXY(name: string): [number, number] {
  const col = name.charCodeAt(0) - 97;
  const row = Number(name.slice(1)) - 1;
  return [M + G + GAP + col * (C + GAP), M + G + GAP + row * (C + GAP)];
}

/** The cell of a path that no other listed path passes through (its target). */
function pathPlace(cells: readonly string[], all: readonly (readonly string[])[]): string {
  const inner = cells.slice(1, -1);
  const own = inner.find((c) => all.some((p) => p !== cells && !p.includes(c)));
  return own ?? inner[0] ?? cells[cells.length - 1] ?? "";
}

function ChannelingBoard(props: BoardProps<View, Move>) {
  const { view, header } = props;
  const paths = useMemo(() => props.moves.flatMap((m) => (m.move.kind.case === "choosePath" ? [m.move.kind.value.cells] : [])), [props.moves]);
  const placeOf = useCallback(
    (move: Move) => {
      switch (move.kind.case) {
        case "playGlyph":
          return `glyph:${move.kind.value.glyph}`;
        case "moveDruid":
          return move.kind.value.target;
        case "fillGap":
          return move.kind.value.cell;
        case "choosePath":
          return pathPlace(move.kind.value.cells, paths);
        default:
          return undefined;
      }
    },
    [paths],
  );
  const targets = useTargets(props, placeOf);
  const over = view.step === Step.GAME_OVER || header.status === GameStatus.FINISHED;
  const who = SEATS[view.current] ?? `seat ${view.current}`;
  const mine = header.viewer === view.current;
  const status = over ? (
    <>The game is over after turn {view.turn}.</>
  ) : (
    <>
      <strong>{mine ? "Your turn" : `${who}'s turn`}</strong> (turn {view.turn}): <Capital text={`${mine ? "" : who + " to "}${STEPS[view.step] ?? ""}`} />
      {view.glyph && <> · glyph played: {view.glyph}</>}
    </>
  );
  const facts = (
    <>
      Deck {view.deckCount} · {overchanneling(header.options?.["overchanneling"])}
      {view.endTriggeredBy !== undefined && <> · <strong>The end is triggered by {SEATS[view.endTriggeredBy]}: last turn</strong></>}
    </>
  );
  return (
    <BoardFrame game="channeling" header={header} targets={targets} status={status} facts={facts}>
      <Panel id="grid" w={GRID} h={GRID} label="The Magic Circle: 16 cards with their glyph labels">
        <Grid view={view} paths={paths} />
      </Panel>
      <Panel id="players" w={GRID} h={2 * PLAYER_H + 4} label="Light and Dark: glyph hands, acquired cards, Splendor">
        {view.players.map((_, seat) => (
          <PlayerRow key={seat} view={view} seat={seat} y={seat * (PLAYER_H + 4)} you={header.viewer === seat} acting={!over && view.current === seat} />
        ))}
      </Panel>
    </BoardFrame>
  );
}

function overchanneling(value: unknown): string {
  return value === "vigor" ? "Overchanneling: cubes beyond the Vigor are kept" : "Overchanneling: cubes beyond the Splendor are kept";
}

function Grid(props: { view: View; paths: readonly (readonly string[])[] }) {
  const { view } = props;
  const t = useTargetsContext();
  const preview = t.preview?.move as Move | undefined;
  const shown = preview?.kind.case === "choosePath" ? preview.kind.value.cells : undefined;
  return (
    <>
      <rect class="table" x={0} y={0} width={GRID} height={GRID} rx={10} />
      {/* The deck, face down, in the corner. */}
      <g class="deck">
        <rect x={M + 3} y={M + 3} width={G} height={G} rx={5} class="card-back" />
        <rect x={M} y={M} width={G} height={G} rx={5} class="card-back" />
        <text x={M + G / 2} y={M + G / 2 - 4} text-anchor="middle" class="small">deck</text>
        <text x={M + G / 2} y={M + G / 2 + 12} text-anchor="middle" class="number">{view.deckCount}</text>
      </g>
      {view.colGlyphs.map((g, i) => (
        <GlyphLabel key={`c${i}`} glyph={g} x={M + G + GAP + i * (C + GAP)} y={M} w={C} h={G} line={`column ${"abcd"[i]}`} played={view.glyph === g} />
      ))}
      {view.rowGlyphs.map((g, i) => (
        <GlyphLabel key={`r${i}`} glyph={g} x={M} y={M + G + GAP + i * (C + GAP)} w={G} h={C} line={`row ${i + 1}`} played={view.glyph === g} />
      ))}
      {view.cells.map((cell) => (
        <CellCard key={cell.cell} cell={cell} moved={view.moved === cell.cell} stationary={view.stationary === cell.cell} gap={view.gaps.includes(cell.cell)} />
      ))}
      {props.paths.length > 0 && (
        <g class="paths" aria-hidden="true">
          {props.paths.map((p, i) => (
            <polyline key={i} class={p === shown ? "path shown" : "path"} points={p.map((c) => centre(c).join(",")).join(" ")} />
          ))}
        </g>
      )}
    </>
  );
}

function centre(cell: string): [number, number] {
  const [x, y] = cellXY(cell);
  return [x + C / 2, y + C / 2];
}

function GlyphLabel(props: { glyph: string; x: number; y: number; w: number; h: number; line: string; played: boolean }) {
  const { glyph, x, y, w, h, played } = props;
  const across = w > h;
  return (
    <g class={played ? "glyph-card green played" : "glyph-card green"}>
      <title>{`${props.line}: the glyph ${glyph}`}</title>
      <rect x={x} y={y} width={w} height={h} rx={5} />
      {across ? (
        <>
          <Icon name={glyph} x={x + w / 2} y={y + 17} size={20} />
          <text x={x + w / 2} y={y + h - 7} text-anchor="middle" class="glyph-name">{glyph}</text>
        </>
      ) : (
        <>
          <Icon name={glyph} x={x + w / 2} y={y + h / 2 - 9} size={20} />
          <text x={x + w / 2} y={y + h / 2 + 19} text-anchor="middle" class="glyph-name">{glyph}</text>
        </>
      )}
    </g>
  );
}

function CellCard(props: { cell: Cell; moved: boolean; stationary: boolean; gap: boolean }) {
  const { cell, moved, stationary } = props;
  const [x, y] = cellXY(cell.cell);
  const card = cell.card;
  const name = card ? `card ${cell.cell}: Vigor ${card.vigor}, Splendor ${card.splendor}` : `the gap at ${cell.cell}`;
  return (
    <Target place={cell.cell} name={name} x={x} y={y} w={C} h={C}>
      {card ? <MagicCircle card={card} x={x} y={y} size={C} /> : <rect class="gap" x={x} y={y} width={C} height={C} rx={6} />}
      {!card && (
        <text x={x + C / 2} y={y + C / 2} dy="0.35em" text-anchor="middle" class="small muted-text">
          {props.gap ? "to fill" : "empty"}
        </text>
      )}
      <text x={x + 5} y={y + C - 5} class="cell-name">{cell.cell}</text>
      <Cubes x={x} y={y} light={cell.lightCubes} dark={cell.darkCubes} />
      {cell.druid !== undefined && <Druid x={x + C / 2} y={y + C / 2 - 4} seat={cell.druid} moved={moved} stationary={stationary} />}
      <title>{`${name}${cell.lightCubes ? `, ${cell.lightCubes} Light cubes` : ""}${cell.darkCubes ? `, ${cell.darkCubes} Dark cubes` : ""}${cell.druid !== undefined ? `, ${SEATS[cell.druid]}'s Druid` : ""}`}</title>
    </Target>
  );
}

/** A Magic Circle Card: Vigor outer circles round a flower of Splendor petals. */
function MagicCircle(props: { card: Card; x: number; y: number; size: number }) {
  const { card, x, y, size } = props;
  const cx = x + size / 2;
  const cy = y + size / 2 - 4;
  const ring = size * 0.36;
  const petal = size * 0.15;
  return (
    <g class="magic-circle">
      <rect class="card-face" x={x} y={y} width={size} height={size} rx={6} />
      <circle class="ring" cx={cx} cy={cy} r={ring} />
      {Array.from({ length: card.vigor }, (_, i) => {
        const a = (i / card.vigor) * 2 * Math.PI - Math.PI / 2;
        return <circle key={`v${i}`} class="vigor" cx={cx + ring * Math.cos(a)} cy={cy + ring * Math.sin(a)} r={4.2} />;
      })}
      {Array.from({ length: card.splendor }, (_, i) => {
        const deg = (i / card.splendor) * 360;
        return <ellipse key={`s${i}`} class="petal" cx={cx} cy={cy - petal} rx={petal * 0.42} ry={petal} transform={`rotate(${deg} ${cx} ${cy})`} />;
      })}
      <circle class="heart" cx={cx} cy={cy} r={3} />
      <text x={x + 5} y={y + 13} class="value">V{card.vigor}</text>
      <text x={x + size - 5} y={y + 13} class="value" text-anchor="end">S{card.splendor}</text>
    </g>
  );
}

function Cubes(props: { x: number; y: number; light: number; dark: number }) {
  const { x, y, light, dark } = props;
  const rows: [string, number][] = [];
  if (light) rows.push(["light", light]);
  if (dark) rows.push(["dark", dark]);
  return (
    <>
      {rows.map(([kind, n], r) => {
        const shown = Math.min(n, 7);
        const top = y + C - 14 - (rows.length - 1 - r) * 12;
        const left = x + C - 8 - shown * 8 - 14;
        return (
          <g key={kind} class={`cubes ${kind}`}>
            {Array.from({ length: shown }, (_, i) => (
              <rect key={i} x={left + i * 8} y={top} width={7} height={7} rx={1} />
            ))}
            <text x={x + C - 5} y={top + 7} text-anchor="end" class="cube-count">{n}</text>
          </g>
        );
      })}
    </>
  );
}

function Druid(props: { x: number; y: number; seat: number; moved: boolean; stationary: boolean }) {
  const { x, y, seat, moved, stationary } = props;
  const kind = seat === 0 ? "light" : "dark";
  return (
    <g class={`druid ${kind}`}>
      {(moved || stationary) && <circle class={moved ? "druid-moved" : "druid-still"} cx={x} cy={y} r={19} />}
      <circle cx={x} cy={y} r={14} />
      <Icon name={seat === 0 ? "sun" : "moon"} x={x} y={y} size={17} class="druid-mark" />
    </g>
  );
}

const PLAYER_H = 150;
const HAND_W = 46;
const HAND_H = 58;

function PlayerRow(props: { view: View; seat: number; y: number; you: boolean; acting: boolean }) {
  const { view, seat, y, you, acting } = props;
  const p = view.players[seat]!;
  const kind = seat === 0 ? "light" : "dark";
  const name = SEATS[seat]!;
  return (
    <g class={`player ${kind}${acting ? " acting" : ""}`}>
      <rect class="player-mat" x={2} y={y + 2} width={GRID - 4} height={PLAYER_H - 4} rx={10} />
      <g class={`druid ${kind}`}>
        <circle cx={22} cy={y + 22} r={12} />
        <Icon name={seat === 0 ? "sun" : "moon"} x={22} y={y + 22} size={14} class="druid-mark" />
      </g>
      <text x={42} y={y + 27} class="player-name">
        {name}
        {you ? " (you)" : ""}
        {acting ? " ◀ to play" : ""}
      </text>
      <text x={GRID - 12} y={y + 28} text-anchor="end" class="splendor">
        <tspan class="small">Splendor </tspan>
        {p.splendor}
      </text>
      <text x={14} y={y + 50} class="small">
        Supply {p.supply} cubes · Overchanneling {p.overchanneling} · acquired {p.acquired.length} card{p.acquired.length === 1 ? "" : "s"}
      </text>
      {p.hand.map((g, i) => (
        <HandGlyph key={g} glyph={g} seat={seat} you={you} x={12 + i * (HAND_W + 4)} y={y + 60} />
      ))}
      {p.played.length > 0 && (
        <g class="played">
          <text x={GRID - 12} y={y + 66} text-anchor="end" class="small">played</text>
          {p.played.map((g, i) => (
            <g key={g} class={`glyph-card ${kind} played-card`}>
              <title>{`${name} played ${g}`}</title>
              <rect x={GRID - 12 - 26 - (i % 4) * 28} y={y + 72 + Math.floor(i / 4) * 30} width={26} height={28} rx={3} />
              <Icon name={g} x={GRID - 12 - 13 - (i % 4) * 28} y={y + 86 + Math.floor(i / 4) * 30} size={14} />
            </g>
          ))}
        </g>
      )}
      <g class="acquired">
        {p.acquired.map((c, i) => (
          <g key={c.id}>
            <title>{`acquired: Vigor ${c.vigor}, Splendor ${c.splendor}`}</title>
            <rect class="card-face" x={12 + i * 26} y={y + 124} width={23} height={18} rx={3} />
            <text x={12 + i * 26 + 11.5} y={y + 137} text-anchor="middle" class="tiny">S{c.splendor}</text>
          </g>
        ))}
      </g>
    </g>
  );
}

function HandGlyph(props: { glyph: string; seat: number; you: boolean; x: number; y: number }) {
  const { glyph, seat, x, y } = props;
  const kind = seat === 0 ? "light" : "dark";
  return (
    <Target place={props.you ? `glyph:${glyph}` : `glyph${seat}:${glyph}`} name={`your Glyph Card ${glyph}`} x={x} y={y} w={HAND_W} h={HAND_H}>
      <g class={`glyph-card ${kind}`}>
        <title>{`${SEATS[seat]}'s Glyph Card ${glyph}`}</title>
        <rect x={x} y={y} width={HAND_W} height={HAND_H} rx={5} />
        <Icon name={glyph} x={x + HAND_W / 2} y={y + 22} size={22} />
        <text x={x + HAND_W / 2} y={y + HAND_H - 8} text-anchor="middle" class="glyph-name">{glyph}</text>
      </g>
    </Target>
  );
}

export const channeling: BoardModule<View, Move> = { view: ViewSchema, Board: ChannelingBoard };
