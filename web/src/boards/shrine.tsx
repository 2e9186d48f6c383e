// Shrine: Duel of Light's board, from the viewer's side (the view's bottom_seat: Sun's
// side is row 1, from Moon's the board is turned half round; field names never turn):
// the illuminated main board with its twelve fields lit by their Arcane Lenses, the four
// corner dials with their arrows, active, inactive or gone to the track, Block tokens and
// printed targets; under it the Offering, the pouch, the Treasury and the game progress
// track. Then the viewer's own Code card (aligned with the board) and Shape cards, and
// each player board: Treasure, the six Treasure Powers and the Treasure blocking them,
// Feathered Serpents, Block, Pass and Debt tokens, the Proof tile and completed Shapes.
//
// Targets: a field (place, overwrite, relocate from it, block it, the fields a Shape is
// completed on), a Treasure Power (unlock, a Shape's unlock reward), the Feathered
// Serpents, the Pass and Debt spaces, the Offering (refresh, search, accept), a Shape deck
// (draw, bonus), a Shape card (complete it, keep it, the Treasure reward) and the Proof
// tokens of a colour (claim).
import { useCallback } from "preact/hooks";
import { GameStatus } from "../gen/tabletop/common/v1/game_pb";
import {
  Colour,
  DialSide,
  Step,
  ViewSchema,
  type BoardField,
  type CodeCard,
  type DialState,
  type Move,
  type Player,
  type ShapeCard,
  type View,
} from "../gen/tabletop/shrine/v1/shrine_pb";
import { BoardFrame, Panel } from "./svg/frame";
import { Icon } from "./svg/icons";
import { Target, useTargets, useTargetsContext } from "./svg/targets";
import type { BoardModule, BoardProps } from "./types";

const SEATS = ["Sun", "Moon"];
const COLOURS: Record<number, { name: string; fill: string; letter: string }> = {
  [Colour.RED]: { name: "red", fill: "#d8392f", letter: "R" },
  [Colour.YELLOW]: { name: "yellow", fill: "#f2c12e", letter: "Y" },
  [Colour.BLUE]: { name: "blue", fill: "#2d6fd6", letter: "B" },
  [Colour.ORANGE]: { name: "orange", fill: "#f08424", letter: "O" },
  [Colour.GREEN]: { name: "green", fill: "#35a852", letter: "G" },
  [Colour.PURPLE]: { name: "purple", fill: "#8d4cc4", letter: "P" },
};

function colourName(c: Colour): string {
  return COLOURS[c]?.name ?? "";
}

// ---- where each move is made -----------------------------------------------------------

function placeOf(viewer: number | undefined) {
  return (move: Move): string | undefined => {
    const k = move.kind;
    switch (k.case) {
      case "unlock":
      case "serpent":
        return k.case === "serpent" ? `serpent:${viewer}` : `power:${viewer}:${k.value.power}`;
      case "reward":
        return k.value.unlock ? `power:${viewer}:${k.value.unlock}` : "completing";
      case "draw":
      case "bonus":
        return `deck:${k.value.deck}`;
      case "keep":
        return `drawn:${k.value.index}`;
      case "passTurn":
        return `pass:${viewer}`;
      case "debt":
        return `debt:${viewer}`;
      case "refresh":
      case "search":
      case "accept":
        return "offering";
      case "place":
      case "overwrite":
      case "block":
        return k.value.field;
      case "relocate":
        return k.value.origin;
      case "at":
        return [...k.value.fields].sort(fieldOrder)[0];
      case "shape":
        return `hand:${k.value.card}`;
      case "claim":
        return `proof:${viewer}:${k.value.colour}`;
      default:
        return undefined; // done, skip
    }
  };
}

/** Fields in reading order from Sun's side: a4 b4 ... then down to row 1. */
function fieldOrder(a: string, b: string): number {
  return Number(b[1]) - Number(a[1]) || a.localeCompare(b);
}

// ---- geometry of the main board ---------------------------------------------------------

const F = 84; // a field
const GX = 26; // the grid's left edge
const GY = 44; // the grid's top edge
const BW = GX + 4 * F + 14;
const STRIP = 96; // the Offering, pouch, Treasury and track under the board
const BH = GY + 4 * F + 40 + STRIP;

/** The drawing's column and row (0-3 from the top left) of a board name, from `bottom`'s side. */
function slot(name: string, bottom: number): [number, number] {
  const col = name.charCodeAt(0) - 97;
  const row = Number(name.slice(1)) - 1;
  return bottom === 1 ? [3 - col, row] : [col, 3 - row];
}

function xy(name: string, bottom: number): [number, number] {
  const [c, r] = slot(name, bottom);
  return [GX + c * F, GY + r * F];
}

function ShrineBoard(props: BoardProps<View, Move>) {
  const { view, header } = props;
  const viewer = header.viewer;
  const targets = useTargets(props, useCallback(placeOf(viewer), [viewer]));
  const over = view.step === Step.OVER || header.status === GameStatus.FINISHED;
  const who = SEATS[view.current] ?? "";
  const mine = viewer === view.current;
  const bottom = view.bottomSeat === 1 ? 1 : 0;
  const own = view.players.find((p) => p.codeCard);
  const status = over ? (
    <>The game is over after turn {view.turn}.</>
  ) : (
    <>
      <strong>{mine ? "Your turn" : `${who}'s turn`}</strong> (turn {view.turn}): {view.stepText}
    </>
  );
  const did: string[] = [];
  if (!over && view.powersUsedThisTurn) did.push(`Treasure Powers used this turn: ${view.powersUsedThisTurn}`);
  if (!over && view.placedThisTurn) did.push("Lens placed");
  return (
    <BoardFrame
      game="shrine"
      header={header}
      targets={targets}
      status={status}
      facts={
        <>
          Drawn from {SEATS[bottom]}'s side{did.length > 0 && <> · {did.join(" · ")}</>}
          {view.radiantShapes && " · Radiant Shapes"}
        </>
      }
    >
      <Panel id="board" w={BW} h={BH} label="The main board, the Offering, the pouch and the game progress track">
        <MainBoard view={view} bottom={bottom} />
      </Panel>
      {(own || view.drawnCards.length > 0 || view.completing || view.radiantShapes) && (
        <SecretsPanel view={view} own={own} bottom={bottom} />
      )}
      <Panel id="players" w={BW} h={view.players.length * (PLAYER_H + 6)} label="The player boards">
        {view.players.map((p, i) => (
          <PlayerBoard key={i} view={view} player={p} y={i * (PLAYER_H + 6)} you={viewer === p.seat} acting={!over && view.current === p.seat} />
        ))}
      </Panel>
    </BoardFrame>
  );
}

function MainBoard(props: { view: View; bottom: number }) {
  const { view, bottom } = props;
  const t = useTargetsContext();
  const preview = t.preview?.move as Move | undefined;
  const shape = new Set(
    preview?.kind.case === "at" ? preview.kind.value.fields : view.completingFields.length ? view.completingFields : [],
  );
  const cols = bottom === 1 ? "dcba" : "abcd";
  const rows = bottom === 1 ? "1234" : "4321";
  const top = SEATS[1 - bottom]!;
  return (
    <>
      <rect class="stone" x={2} y={2} width={BW - 4} height={GY + 4 * F + 36} rx={14} />
      <Luminary x={BW / 2} y={16} seat={1 - bottom} label={top} />
      <Luminary x={BW / 2} y={GY + 4 * F + 26} seat={bottom} label={SEATS[bottom]!} />
      {[...cols].map((c, i) => (
        <text key={c} x={GX + i * F + F / 2} y={GY - 6} text-anchor="middle" class="coord">{c}</text>
      ))}
      {[...rows].map((r, i) => (
        <text key={r} x={GX - 12} y={GY + i * F + F / 2} dy="0.35em" text-anchor="middle" class="coord">{r}</text>
      ))}
      {view.fields.map((f) => (
        <Field key={f.name} field={f} bottom={bottom} inShape={shape.has(f.name)} ignored={view.completingIgnored === f.name} />
      ))}
      {view.dials.map((d) => (
        <Dial key={d.corner} dial={d} bottom={bottom} />
      ))}
      <Strip view={view} y={GY + 4 * F + 44} />
    </>
  );
}

function Luminary(props: { x: number; y: number; seat: number; label: string }) {
  return (
    <g class={`luminary ${props.seat === 0 ? "sun" : "moon"}`}>
      <Icon name={props.seat === 0 ? "sun" : "moon"} x={props.x - 24} y={props.y} size={15} />
      <text x={props.x - 12} y={props.y} dy="0.35em" class="luminary-name">{props.label}</text>
    </g>
  );
}

function Lens(props: { colour: Colour; x: number; y: number; r: number }) {
  const c = COLOURS[props.colour];
  if (!c) return null;
  return (
    <g class="lens">
      <circle cx={props.x} cy={props.y} r={props.r} fill={c.fill} />
      <circle cx={props.x - props.r * 0.35} cy={props.y - props.r * 0.35} r={props.r * 0.28} class="shine" />
      <text x={props.x} y={props.y} dy="0.35em" text-anchor="middle" class="lens-letter">{c.letter}</text>
    </g>
  );
}

function Field(props: { field: BoardField; bottom: number; inShape: boolean; ignored: boolean }) {
  const { field, bottom } = props;
  const [x, y] = xy(field.name, bottom);
  const lit = COLOURS[field.shows];
  const parts = [`field ${field.name}`];
  if (field.lenses.length) parts.push(`${field.lenses.map(colourName).join(" under ")} lens${field.lenses.length > 1 ? "es" : ""}, shows ${colourName(field.shows)}`);
  else parts.push("empty");
  if (field.printedTarget) parts.push("a printed target");
  if (field.blockedBy !== undefined) parts.push(`${SEATS[field.blockedBy]}'s Block token${field.claimedTarget ? " claiming a target" : field.noClaim ? " claiming nothing" : ""}`);
  const name = parts.join(", ");
  const inner = 4;
  return (
    <Target place={field.name} name={`field ${field.name}`} x={x + inner} y={y + inner} w={F - 2 * inner} h={F - 2 * inner}>
      <title>{name}</title>
      <rect class={field.central ? "field central" : "field"} x={x + inner} y={y + inner} width={F - 2 * inner} height={F - 2 * inner} rx={8} />
      {lit && <rect x={x + inner} y={y + inner} width={F - 2 * inner} height={F - 2 * inner} rx={8} fill={lit.fill} class="glow" />}
      {field.lenses.length === 1 && <Lens colour={field.lenses[0]!} x={x + F / 2} y={y + F / 2} r={20} />}
      {field.lenses.length === 2 && (
        <>
          <Lens colour={field.lenses[0]!} x={x + F / 2 - 10} y={y + F / 2 + 6} r={18} />
          <Lens colour={field.lenses[1]!} x={x + F / 2 + 10} y={y + F / 2 - 6} r={18} />
        </>
      )}
      {field.lenses.length === 2 && lit && (
        <text x={x + F - 8} y={y + F - 9} text-anchor="end" class="shows">= {lit.name}</text>
      )}
      <text x={x + 9} y={y + F - 9} class="field-name">{field.name}</text>
      {field.printedTarget && <TargetMark x={x + F - 16} y={y + 16} />}
      {field.blockedBy !== undefined && (
        <g class="block-token">
          <rect x={x + 8} y={y + 8} width={26} height={26} rx={4} />
          <Icon name={field.blockedBy === 0 ? "sun" : "moon"} x={x + 21} y={y + 21} size={15} />
          {(field.claimedTarget || field.noClaim) && (
            <text x={x + 38} y={y + 25} class="block-claim">{field.claimedTarget ? "target" : "no claim"}</text>
          )}
        </g>
      )}
      {props.inShape && <rect class={props.ignored ? "in-shape ignored" : "in-shape"} x={x + 10} y={y + 10} width={F - 20} height={F - 20} rx={6} />}
    </Target>
  );
}

function TargetMark(props: { x: number; y: number }) {
  return (
    <g class="target-mark" aria-hidden="true">
      <circle cx={props.x} cy={props.y} r={8} />
      <circle cx={props.x} cy={props.y} r={4} />
      <circle cx={props.x} cy={props.y} r={1.2} />
    </g>
  );
}

function Dial(props: { dial: DialState; bottom: number }) {
  const { dial, bottom } = props;
  const [x, y] = xy(dial.corner, bottom);
  const cx = x + F / 2;
  const cy = y + F / 2;
  if (dial.side === DialSide.REMOVED) {
    return (
      <g class="dial removed">
        <title>{`dial ${dial.corner}: removed to the game progress track`}</title>
        <circle cx={cx} cy={cy} r={28} />
        <text x={cx} y={cy} dy="0.35em" text-anchor="middle" class="tiny">on track</text>
        <DialName corner={dial.corner} bottom={bottom} />
      </g>
    );
  }
  const active = dial.side === DialSide.ACTIVE;
  const [fx, fy] = xy(dial.facing || dial.corner, bottom);
  const dx = fx - x;
  const dy = fy - y;
  const len = Math.hypot(dx, dy) || 1;
  const ux = dx / len;
  const uy = dy / len;
  const tipX = cx + ux * 36;
  const tipY = cy + uy * 36;
  const head = `${tipX},${tipY} ${tipX - ux * 11 - uy * 7},${tipY - uy * 11 + ux * 7} ${tipX - ux * 11 + uy * 7},${tipY - uy * 11 - ux * 7}`;
  return (
    <g class={active ? "dial active" : "dial inactive"}>
      <title>{`dial ${dial.corner}: ${active ? "active" : "inactive"}, pointing at ${dial.facing}`}</title>
      <circle cx={cx} cy={cy} r={28} />
      <line x1={cx - ux * 16} y1={cy - uy * 16} x2={tipX - ux * 6} y2={tipY - uy * 6} class="arrow-line" />
      {active ? <polygon points={head} class="arrow-head" /> : <rect x={tipX - ux * 6 - 5} y={tipY - uy * 6 - 5} width={10} height={10} class="arrow-head" />}
      <DialName corner={dial.corner} bottom={bottom} />
    </g>
  );
}

/** A dial's corner name, in the corner of its square away from the fields. */
function DialName(props: { corner: string; bottom: number }) {
  const [c, r] = slot(props.corner, props.bottom);
  const [x, y] = xy(props.corner, props.bottom);
  return (
    <text x={c === 0 ? x + 3 : x + F - 3} y={r === 0 ? y + 11 : y + F - 3} text-anchor={c === 0 ? "start" : "end"} class="dial-name">
      {props.corner}
    </text>
  );
}

function Strip(props: { view: View; y: number }) {
  const { view, y } = props;
  const offering = COLOURS[view.offering];
  const aside = view.setAside.filter((c) => c.count > 0);
  return (
    <g class="strip">
      <Target place="offering" name="the Offering" x={8} y={y} w={78} h={STRIP - 12}>
        <rect class="slot" x={8} y={y} width={78} height={STRIP - 12} rx={8} />
        <text x={47} y={y + 15} text-anchor="middle" class="small">Offering</text>
        {offering ? <Lens colour={view.offering} x={47} y={y + 48} r={20} /> : <text x={47} y={y + 52} text-anchor="middle" class="small muted-text">empty</text>}
        <title>{`the Offering: ${offering ? `a ${offering.name} Lens` : "empty"}`}</title>
      </Target>
      <g>
        <title>{`the pouch: ${view.pouch} Lenses (${view.pouchColours.map((c) => `${c.count} ${colourName(c.colour)}`).join(", ")})`}</title>
        <rect class="slot" x={94} y={y} width={112} height={STRIP - 12} rx={8} />
        <text x={150} y={y + 15} text-anchor="middle" class="small">Pouch · {view.pouch}</text>
        {view.pouchColours.map((c, i) => (
          <g key={c.colour}>
            <Lens colour={c.colour} x={114 + i * 36} y={y + 42} r={11} />
            <text x={114 + i * 36} y={y + 70} text-anchor="middle" class="count-text">{c.count}</text>
          </g>
        ))}
        {aside.length > 0 && (
          <text x={150} y={y + 82} text-anchor="middle" class="tiny">
            set aside: {aside.map((c) => `${c.count} ${colourName(c.colour)}`).join(", ")}
          </text>
        )}
      </g>
      <g>
        <title>{`the Treasury: ${view.treasury} Treasure`}</title>
        <rect class="slot" x={214} y={y} width={60} height={STRIP - 12} rx={8} />
        <text x={244} y={y + 15} text-anchor="middle" class="small">Treasury</text>
        <Coin x={244} y={y + 44} r={16} />
        <text x={244} y={y + 74} text-anchor="middle" class="count-text">{view.treasury}</text>
      </g>
      <g>
        <title>{`the game progress track: ${view.progressTrack.map((s) => `${s.treasure} Treasure${s.dial ? `, dial ${s.dial}` : ""}`).join("; ")}`}</title>
        <rect class="slot" x={282} y={y} width={BW - 290} height={STRIP - 12} rx={8} />
        <text x={282 + (BW - 290) / 2} y={y + 15} text-anchor="middle" class="small">Progress</text>
        {view.progressTrack.map((s, i) => (
          <g key={i}>
            <rect class={s.dial ? "track-space filled" : "track-space"} x={290} y={y + 22 + i * 20} width={BW - 306} height={17} rx={4} />
            <text x={296} y={y + 34 + i * 20} class="tiny">{s.treasure}✦</text>
            {s.dial && <text x={BW - 22} y={y + 34 + i * 20} text-anchor="end" class="tiny">{s.dial}</text>}
          </g>
        ))}
      </g>
    </g>
  );
}

function Coin(props: { x: number; y: number; r: number }) {
  return (
    <g class="coin">
      <circle cx={props.x} cy={props.y} r={props.r} />
      <circle cx={props.x} cy={props.y} r={props.r * 0.62} class="coin-inner" />
    </g>
  );
}

// ---- the viewer's secrets: Code card, Shape cards; drawn and completing cards ---------

const CARD_W = 66;
const CARD_H = 100;

function SecretsPanel(props: { view: View; own: Player | undefined; bottom: number }) {
  const { view, own, bottom } = props;
  const code = own?.codeCard;
  const hand = own?.hand ?? [];
  const decks = view.radiantShapes ? view.shapeDecks : [];
  // The Code card on the left; the Shape decks and the cards drawn or being completed on
  // its right; the hand under both, across.
  const rx = code ? 178 : 8;
  const showing = view.completing ? [view.completing] : view.drawnCards;
  const rightH = (decks.length ? 58 : 0) + (showing.length ? 20 + CARD_H : 0) + (view.drawn > 0 && showing.length === 0 ? 20 : 0);
  const top = Math.max(code ? 192 : 0, rightH) + 6;
  const perRow = Math.max(1, Math.floor((BW - 8) / (CARD_W + 6)));
  const rows = Math.ceil(hand.length / perRow);
  const h = top + (own && view.radiantShapes ? 22 + rows * (CARD_H + 6) : 0) + 4;
  return (
    <Panel id="secrets" w={BW} h={h} label="Your Code card, your Shape cards and the Shape decks">
      {code && <Code card={code} bottom={bottom} />}
      {decks.map((d, i) => {
        const x = rx + i * 64;
        const y = 6;
        return (
          <Target key={d.size} place={`deck:${d.size}`} name={`the Shape deck of ${d.size}-field patterns`} x={x} y={y} w={58} h={44}>
            <title>{`Shape deck ${d.size}: ${d.cards} cards`}</title>
            <rect class="card-back" x={x + 3} y={y + 3} width={55} height={41} rx={5} />
            <rect class="card-back" x={x} y={y} width={55} height={41} rx={5} />
            <text x={x + 28} y={y + 17} text-anchor="middle" class="deck-text">{d.size} fields</text>
            <text x={x + 28} y={y + 33} text-anchor="middle" class="deck-text">{d.cards} left</text>
          </Target>
        );
      })}
      {showing.length > 0 && (
        <g>
          <text x={rx} y={(decks.length ? 58 : 0) + 14} class="section">
            {view.completing ? `Completing #${view.completing.id}` : "Drawn: keep one"}
          </text>
          {showing.map((c, i) => (
            <Shape key={c.id} card={c} place={view.completing ? "completing" : `drawn:${i}`} x={rx + i * (CARD_W + 6)} y={(decks.length ? 58 : 0) + 20} />
          ))}
        </g>
      )}
      {view.drawn > 0 && showing.length === 0 && (
        <text x={rx} y={(decks.length ? 58 : 0) + 14} class="small">{SEATS[view.current]} drew {view.drawn} Shape cards and keeps one.</text>
      )}
      {own && view.radiantShapes && (
        <text x={8} y={top + 14} class="section">
          Your Shape cards ({hand.length})
        </text>
      )}
      {hand.map((c, i) => (
        <Shape key={c.id} card={c} place={`hand:${c.id}`} x={8 + (i % perRow) * (CARD_W + 6)} y={top + 22 + Math.floor(i / perRow) * (CARD_H + 6)} />
      ))}
    </Panel>
  );
}

function Code(props: { card: CodeCard; bottom: number }) {
  const { card, bottom } = props;
  const s = 36;
  const ox = 14;
  const oy = 30;
  const targets = new Set(card.targets);
  return (
    <g class="code-card">
      <title>{`your Code card ${card.id} (hidden from your opponent)`}</title>
      <rect class="card-face" x={4} y={4} width={164} height={182} rx={8} />
      <text x={14} y={21} class="section">Your Code card</text>
      {card.fields.map((f) => {
        const [c, r] = slot(f.field, bottom);
        const col = COLOURS[f.colour];
        const x = ox + c * s;
        const y = oy + r * s;
        return (
          <g key={f.field}>
            <title>{`${f.field}: ${col?.name ?? "?"}${targets.has(f.field) ? ", a target" : ""}`}</title>
            <rect x={x + 1} y={y + 1} width={s - 2} height={s - 2} rx={4} fill={col?.fill ?? "#999"} class="code-field" />
            <text x={x + s / 2} y={y + s / 2} dy="0.35em" text-anchor="middle" class="code-letter">{col?.letter}</text>
            {targets.has(f.field) && <circle cx={x + s - 8} cy={y + 8} r={5} class="code-target" />}
          </g>
        );
      })}
      <text x={14} y={oy + 4 * s + 12} class="tiny">{card.id} · ◎ targets: {card.targets.join(" ")}</text>
    </g>
  );
}

function Shape(props: { card: ShapeCard; place: string; x: number; y: number }) {
  const { card, x, y } = props;
  const rows = card.pattern.length;
  const cols = Math.max(...card.pattern.map((r) => r.length), 1);
  const cell = Math.min(13, 56 / Math.max(rows, cols));
  const px = x + (CARD_W - cols * cell) / 2;
  const py = y + 22 + (44 - rows * cell) / 2;
  const name = `Shape card #${card.id}: ${card.size} fields, ${card.treasure} Treasure, or ${card.unlockTreasure} and an unlock${card.bonusDecks.length ? `, bonus deck ${card.bonusDecks.join("/")}` : ""}`;
  return (
    <Target place={props.place} name={`Shape card #${card.id}`} x={x} y={y} w={CARD_W} h={CARD_H}>
      <title>{name}</title>
      <rect class="shape-card" x={x} y={y} width={CARD_W} height={CARD_H} rx={6} />
      <text x={x + 6} y={y + 14} class="tiny strong">#{card.id}</text>
      {card.bonusDecks.length > 0 && (
        // Squeezed to the card's width when the three decks are named.
        <text x={x + 6} y={y + 96} class="tiny strong" {...(card.bonusDecks.length > 2 ? { textLength: CARD_W - 12, lengthAdjust: "spacingAndGlyphs" } : {})}>
          bonus {card.bonusDecks.join("/")}
        </text>
      )}
      {card.pattern.map((row, r) =>
        [...row].map((ch, c) => (ch === "X" ? <rect key={`${r}-${c}`} class="pattern" x={px + c * cell} y={py + r * cell} width={cell - 1.5} height={cell - 1.5} rx={2} /> : null)),
      )}
      <text x={x + 6} y={y + 76} class="tiny">{card.treasure}✦ only</text>
      <text x={x + 6} y={y + 87} class="tiny">{card.unlockTreasure}✦ + unlock</text>
    </Target>
  );
}

// ---- player boards ----------------------------------------------------------------------

const PLAYER_H = 212;

function PlayerBoard(props: { view: View; player: Player; y: number; you: boolean; acting: boolean }) {
  const { view, player, y, you, acting } = props;
  const seat = player.seat;
  const pw = (BW - 24) / 3;
  return (
    <g class={`player ${acting ? "acting" : ""}`}>
      <rect class="player-mat" x={2} y={y + 2} width={BW - 4} height={PLAYER_H - 4} rx={10} />
      <Icon name={seat === 0 ? "sun" : "moon"} x={22} y={y + 22} size={20} class={seat === 0 ? "sun-mark" : "moon-mark"} />
      <text x={40} y={y + 27} class="player-name">
        {player.name}
        {you ? " (you)" : ""}
        {acting ? " ◀ to play" : ""}
      </text>
      {player.startingPlayer && (
        <g class="start-token">
          <title>holds the Starting Player token (a tie goes to the other player)</title>
          <rect x={BW - 150} y={y + 11} width={56} height={20} rx={10} />
          <text x={BW - 122} y={y + 25} text-anchor="middle" class="tiny">start</text>
        </g>
      )}
      <g>
        <title>{`${player.treasure} Treasure`}</title>
        <Coin x={BW - 74} y={y + 21} r={11} />
        <text x={BW - 58} y={y + 27} class="treasure">{player.treasure}</text>
      </g>
      {player.powers.map((p, i) => {
        const x = 10 + (i % 3) * (pw + 2);
        const py = y + 40 + Math.floor(i / 3) * 46;
        return (
          <Target key={p.power} place={`power:${seat}:${p.power}`} name={`${p.name} (${player.name})`} x={x} y={py} w={pw} h={42}>
            <title>{`${p.name}: costs ${p.prices.join(" or ")}; ${p.blocked ? `blocked by ${p.treasure} Treasure` : "open"}`}</title>
            <rect class={p.blocked ? "power blocked" : "power open"} x={x} y={py} width={pw} height={42} rx={6} />
            <text x={x + 6} y={py + 15} class="tiny strong">{short(p.name)}</text>
            <text x={x + 6} y={py + 31} class="tiny">{p.prices.join("/")}✦</text>
            {p.blocked ? (
              Array.from({ length: p.treasure }, (_, k) => <Coin key={k} x={x + pw - 12 - k * 14} y={py + 27} r={6} />)
            ) : (
              <text x={x + pw - 6} y={py + 31} text-anchor="end" class="tiny open-text">open</text>
            )}
          </Target>
        );
      })}
      <Tokens y={y + 136} seat={seat} player={player} />
      {view.radiantShapes && <Proofs y={y + 166} player={player} bottom={view.bottomSeat === 1 ? 1 : 0} />}
    </g>
  );
}

function short(name: string): string {
  const words: Record<string, string> = {
    "Dial Rotation": "Dial Rotation",
    "Refreshing the Offering": "Refreshing",
    "Using an Inactive Dial": "Inactive Dial",
    "Treasure Acquisition and Field Blocking": "Field Blocking",
    Overwriting: "Overwriting",
    Relocating: "Relocating",
  };
  return words[name] ?? (name.length > 16 ? name.slice(0, 15) + "…" : name);
}

function Slots(props: { x: number; y: number; total: number; filled: number; label: string; kind: string; icon?: string }) {
  const { x, y, total, filled, label, kind } = props;
  return (
    <g class={`slots ${kind}`}>
      <title>{`${label}: ${filled} of ${total}`}</title>
      <text x={x} y={y + 10} class="tiny">{label}</text>
      {Array.from({ length: total }, (_, i) => (
        <g key={i}>
          <rect class={i < filled ? "token-slot filled" : "token-slot"} x={x + i * 20} y={y + 14} width={17} height={14} rx={3} />
          {props.icon && i < filled && <Icon name={props.icon} x={x + i * 20 + 8.5} y={y + 21} size={10} />}
        </g>
      ))}
    </g>
  );
}

function Tokens(props: { y: number; seat: number; player: Player }) {
  const { y, seat, player } = props;
  return (
    <>
      <Target place={`serpent:${seat}`} name="the Feathered Serpents" x={10} y={y} w={48} h={28}>
        <Slots x={10} y={y} total={2} filled={player.serpents} label="Serpents" kind="serpents" />
      </Target>
      <Slots x={76} y={y} total={3} filled={player.blockTokens} label="Blocks" kind="blocks" />
      <Target place={`pass:${seat}`} name="the Pass spaces" x={154} y={y} w={48} h={28}>
        <Slots x={154} y={y} total={2} filled={player.passes} label="Passes" kind="passes" />
      </Target>
      <Target place={`debt:${seat}`} name="the Debt spaces" x={220} y={y} w={64} h={28}>
        <Slots x={220} y={y} total={3} filled={player.debts} label="Debts" kind="debts" />
      </Target>
    </>
  );
}

function Proofs(props: { y: number; player: Player; bottom: number }) {
  const { y, player, bottom } = props;
  const seat = player.seat;
  const proof = new Map(player.proof.map((p) => [p.field, p.colour]));
  const s = 7;
  return (
    <g class="proofs">
      <text x={10} y={y + 10} class="tiny">Proof tile</text>
      <g>
        <title>{`Proof tokens: ${player.proof.map((p) => `${p.field} ${colourName(p.colour)}`).join(", ") || "none"}`}</title>
        {["b1", "c1", "a2", "b2", "c2", "d2", "a3", "b3", "c3", "d3", "b4", "c4"].map((f) => {
          const [c, r] = slot(f, bottom);
          const colour = proof.get(f);
          return <rect key={f} x={64 + c * (s + 1)} y={y + r * (s + 1) - 3} width={s} height={s} fill={colour ? COLOURS[colour]?.fill : "none"} class="proof-field" />;
        })}
      </g>
      {player.proofTokensLeft.map((c, i) => (
        <Target key={c.colour} place={`proof:${seat}:${c.colour}`} name={`your ${colourName(c.colour)} Proof tokens`} x={104 + i * 34} y={y - 2} w={30} h={26}>
          <title>{`${c.count} ${colourName(c.colour)} Proof token${c.count === 1 ? "" : "s"} left`}</title>
          <circle cx={114 + i * 34} cy={y + 10} r={8} fill={COLOURS[c.colour]?.fill} class="proof-token" />
          <text x={114 + i * 34} y={y + 10} dy="0.35em" text-anchor="middle" class="lens-letter small-letter">{COLOURS[c.colour]?.letter}</text>
          <text x={125 + i * 34} y={y + 14} class="tiny">{c.count}</text>
        </Target>
      ))}
      <text x={BW - 8} y={y + 32} text-anchor="end" class="tiny">
        Shapes in hand {player.shapesInHand}
        {player.completed.length > 0 && ` · completed #${player.completed.map((c) => c.id).join(" #")}`}
      </text>
    </g>
  );
}

export const shrine: BoardModule<View, Move> = { view: ViewSchema, Board: ShrineBoard };
