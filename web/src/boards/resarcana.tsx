// Res Arcana Duo's board: the middle of the table (the Places of Power, the face-up
// Monuments and the Monument deck, the Magic Items, the general supply of essences),
// then each player's tableau (the Mage, the Magic Item, Artifacts, Monuments and Places
// of Power, straight or turned, with the essences on them; the pool, VP, the First Player
// token, hand and draw pile counts, the discard pile), then what only the viewer sees: the
// hand, the draft, the Mages to choose from, the Monuments looked at.
//
// Cards are drawn as the rulebook describes them: the cost in the upper left, the
// victory points, the Collect ability and the powers ("turn + 1 elan → gain 1 gold"),
// each power its own target for `power <component> <n>`. Other targets: a card in the
// hand (place, discard, return), the draft (keep), a Mage (mage), a Magic Item (item),
// a Monument or Place of Power (claim, monument), the Monument deck and the draw pile
// (claim deck, pile), a component (take, turn, straighten, target), a discarded card
// (retrieve), an essence in the supply (gain) or in the viewer's pool (pay).
import type { ComponentChildren } from "preact";
import { useCallback } from "preact/hooks";
import { GameStatus } from "../gen/tabletop/common/v1/game_pb";
import {
  CardKind,
  CardType,
  Essence,
  Phase,
  Pile,
  ViewSchema,
  type Card,
  type Component,
  type Essences,
  type Move,
  type Player,
  type View,
} from "../gen/tabletop/resarcana/v1/resarcana_pb";
import { BoardFrame, Panel } from "./svg/frame";
import { cut, fits, Lines, wrap } from "./svg/text";
import { Target, useTargets } from "./svg/targets";
import type { BoardModule, BoardProps } from "./types";

const SEATS = ["Player 1", "Player 2"];
type EssenceKey = "elan" | "life" | "calm" | "death" | "gold";
const ESSENCES: { key: EssenceKey; essence: Essence; name: string; letter: string }[] = [
  { key: "elan", essence: Essence.ELAN, name: "Elan", letter: "E" },
  { key: "life", essence: Essence.LIFE, name: "Life", letter: "L" },
  { key: "calm", essence: Essence.CALM, name: "Calm", letter: "C" },
  { key: "death", essence: Essence.DEATH, name: "Death", letter: "D" },
  { key: "gold", essence: Essence.GOLD, name: "Gold", letter: "G" },
];
const PHASES: Record<number, string> = {
  [Phase.DRAFT]: "Setup: the draft",
  [Phase.MAGE]: "Setup: choosing Mages",
  [Phase.MAGIC_ITEM]: "Setup: choosing Magic Items",
  [Phase.COLLECT]: "1. Collect essences",
  [Phase.ACTIONS]: "2. Actions",
  [Phase.OVER]: "The game is over",
};
const KINDS: Record<number, string> = {
  [CardKind.ARTIFACT]: "Artifact",
  [CardKind.MAGE]: "Mage",
  [CardKind.MAGIC_ITEM]: "Magic Item",
  [CardKind.MONUMENT]: "Monument",
  [CardKind.PLACE_OF_POWER]: "Place of Power",
};
const TYPES: Record<number, string> = { [CardType.CREATURE]: "Creature", [CardType.DRAGON]: "Dragon", [CardType.DEMON]: "Demon" };

const W = 372;
const CW = 116; // a card's width
const GAP = 6;
const PER_ROW = 3;

function essenceOf(e: Essence) {
  return ESSENCES.find((x) => x.essence === e);
}

// ---- where each move is made -----------------------------------------------------------

function placeOf(view: View) {
  const viewer = view.viewer;
  const looking = new Set(view.looking.map((c) => c.id));
  return (move: Move): string | undefined => {
    const k = move.kind;
    switch (k.case) {
      case "keep":
        return `draft:${k.value.artifact}`;
      case "mage":
        return `mage:${k.value.mage}`;
      case "item":
        return `card:${k.value.magicItem}`;
      case "gain":
        return `supply:${k.value.essence}`;
      case "pay":
        return `pool:${viewer}:${k.value.essence}`;
      case "take":
      case "turn":
      case "straighten":
      case "target":
        return `card:${k.value.component}`;
      case "place":
      case "discard":
        return `hand:${k.value.artifact}`;
      case "claim":
      case "monument":
        if (k.value.target.case === "deck") return "monument-deck";
        if (k.value.target.case === "component") return `card:${k.value.target.value}`;
        if (k.value.target.case === "monument") return `card:${k.value.target.value}`;
        return undefined;
      case "power":
        return `power:${k.value.component}:${k.value.power}`;
      case "retrieve":
        return `discarded:${k.value.artifact}`;
      case "returnCard":
        return looking.has(k.value.card) ? `looking:${k.value.card}` : `hand:${k.value.card}`;
      case "pile":
        return k.value.pile === Pile.MONUMENTS ? "monument-deck" : `pile:${viewer}`;
      default:
        return undefined; // option, done, pass, waive
    }
  };
}

// ---- cards ------------------------------------------------------------------------------

const TINY = 10;
const LEAD = 12;

interface Laid {
  card: Card;
  name: string[];
  kind: string;
  texts: string[][];
  powers: string[][];
  h: number;
}

function costText(card: Card): string {
  const c = card.cost;
  if (!c) return "";
  const parts = ESSENCES.filter((e) => (c.essences?.[e.key] ?? 0) > 0).map((e) => `${c.essences![e.key]} ${e.name.toLowerCase()}`);
  if (c.any) parts.push(`${c.any} any${c.anyExcludes.map((e) => ` !${essenceOf(e)?.name.toLowerCase()}`).join("")}`);
  return parts.join(" + ") || "free";
}

function layCard(card: Card, withEssences: boolean): Laid {
  const vp = card.victoryPoints > 0;
  const name = wrap(card.name, fits(CW - 14 - (vp ? 22 : 0), 12), 2);
  const types = card.types.map((t) => TYPES[t]).filter(Boolean);
  const kind = types.length ? types.join(" · ") : (KINDS[card.kind] ?? "");
  const chars = fits(CW - 12, TINY);
  const texts: string[][] = [];
  if (card.victoryPointsPerEssence) texts.push(wrap(`+${card.victoryPointsPerEssence} VP per essence on it`, chars));
  if (card.collect) texts.push(wrap(`collect ${card.collect}`, chars));
  if (card.discount) texts.push(wrap(`discount ${card.discount}`, chars));
  const powers = card.powers.map((p, i) => wrap(`${i + 1}) ${p.replace(/->/g, "→")}`, chars));
  const hasCost = card.cost !== undefined;
  let h = 8 + name.length * 14 + 12 + (hasCost ? 22 : 0);
  for (const t of texts) h += t.length * LEAD + 2;
  for (const p of powers) h += p.length * LEAD + 6;
  if (withEssences) h += 22;
  return { card, name, kind, texts, powers, h: Math.max(h + 6, 96) };
}

function EssenceToken(props: { e: (typeof ESSENCES)[number]; x: number; y: number; r?: number }) {
  const r = props.r ?? 8;
  return (
    <g class={`essence ${props.e.key}`}>
      <circle cx={props.x} cy={props.y} r={r} />
      <text x={props.x} y={props.y} dy="0.35em" text-anchor="middle" class="essence-letter" font-size={r * 1.15}>
        {props.e.letter}
      </text>
    </g>
  );
}

/** A card at (x, y), `h` tall; `place` makes the whole card a target. */
function CardView(props: { laid: Laid; x: number; y: number; h: number; place?: string; essences?: Essences; turned?: boolean; owner?: string; extra?: ComponentChildren }) {
  const { laid, x, y, h } = props;
  const card = laid.card;
  let cy = y + 8;
  const body: ComponentChildren[] = [];
  body.push(<rect key="face" class={`rcard ${kindClass(card)}`} x={x} y={y} width={CW} height={h} rx={7} />);
  body.push(<Lines key="name" x={x + 7} y={cy + 11} lines={laid.name} leading={14} class="card-name" />);
  if (card.victoryPoints > 0) {
    body.push(
      <g key="vp" class="vp">
        <title>{`${card.victoryPoints} victory point${card.victoryPoints === 1 ? "" : "s"}`}</title>
        <circle cx={x + CW - 14} cy={y + 15} r={10} />
        <text x={x + CW - 14} y={y + 15} dy="0.35em" text-anchor="middle">{card.victoryPoints}</text>
      </g>,
    );
  }
  cy += laid.name.length * 14;
  body.push(
    <text key="kind" x={x + 7} y={cy + 8} class="card-kind">
      {laid.kind}
    </text>,
  );
  cy += 12;
  if (card.cost) {
    const c = card.cost;
    const items = ESSENCES.filter((e) => (c.essences?.[e.key] ?? 0) > 0);
    let cx = x + 15;
    body.push(
      <g key="cost" class="cost">
        <title>{`cost: ${costText(card)}`}</title>
        {items.map((e) => {
          const n = c.essences![e.key];
          const out = (
            <g key={e.key}>
              <EssenceToken e={e} x={cx} y={cy + 10} />
              <text x={cx + 10} y={cy + 14} class="cost-n">{n}</text>
            </g>
          );
          cx += 30;
          return out;
        })}
        {c.any > 0 && (
          <g>
            <circle cx={cx} cy={cy + 10} r={8} class="any" />
            <text x={cx} y={cy + 10} dy="0.35em" text-anchor="middle" class="essence-letter any-letter">
              ?
            </text>
            <text x={cx + 10} y={cy + 14} class="cost-n">
              {c.any}
              {c.anyExcludes.length > 0 && ` !${c.anyExcludes.map((e) => essenceOf(e)?.letter).join("")}`}
            </text>
          </g>
        )}
        {items.length === 0 && c.any === 0 && (
          <text x={x + 7} y={cy + 14} class="cost-n">
            free
          </text>
        )}
      </g>,
    );
    cy += 22;
  }
  for (const [i, t] of laid.texts.entries()) {
    body.push(<Lines key={`t${i}`} x={x + 7} y={cy + 9} lines={t} leading={LEAD} class="card-text" />);
    cy += t.length * LEAD + 2;
  }
  for (const [i, p] of laid.powers.entries()) {
    const ph = p.length * LEAD + 4;
    body.push(
      <Target key={`p${i}`} place={`power:${card.id}:${i + 1}`} name={`${card.name}'s power ${i + 1}`} x={x + 3} y={cy} w={CW - 6} h={ph}>
        <rect class="power-box" x={x + 3} y={cy} width={CW - 6} height={ph} rx={4} />
        <Lines x={x + 7} y={cy + 10} lines={p} leading={LEAD} class="card-text" />
      </Target>,
    );
    cy += ph + 2;
  }
  if (props.essences) {
    const on = ESSENCES.filter((e) => (props.essences![e.key] ?? 0) > 0);
    let ex = x + 14;
    body.push(
      <g key="on" class="on-card">
        <title>{`on it: ${on.map((e) => `${props.essences![e.key]} ${e.name}`).join(", ") || "nothing"}`}</title>
        {on.map((e) => {
          const out = (
            <g key={e.key}>
              <EssenceToken e={e} x={ex} y={y + h - 13} r={7.5} />
              <text x={ex + 10} y={y + h - 9} class="cost-n">{props.essences![e.key]}</text>
            </g>
          );
          ex += 25;
          return out;
        })}
      </g>,
    );
  }
  if (props.turned) {
    body.push(
      <g key="turned" class="turned-tag">
        <rect x={x + CW - 50} y={y + h - 20} width={46} height={15} rx={7} />
        <text x={x + CW - 27} y={y + h - 9} text-anchor="middle">turned</text>
      </g>,
    );
  }
  const label = `${card.name} (${laid.kind}${card.cost ? `, cost ${costText(card)}` : ""})${props.turned ? ", turned" : ""}`;
  const g = (
    <g class={props.turned ? "card-g turned" : "card-g"} transform={props.turned ? `rotate(4 ${x + CW / 2} ${y + h / 2})` : undefined}>
      <title>{label}</title>
      {body}
      {props.extra}
    </g>
  );
  if (!props.place) return g;
  return (
    <Target place={props.place} name={card.name} x={x} y={y} w={CW} h={h}>
      {g}
    </Target>
  );
}

function kindClass(card: Card): string {
  switch (card.kind) {
    case CardKind.MAGE:
      return "mage";
    case CardKind.MAGIC_ITEM:
      return "item";
    case CardKind.MONUMENT:
      return "monument";
    case CardKind.PLACE_OF_POWER:
      return "place";
    default:
      return "artifact";
  }
}

interface Entry {
  card: Card;
  place?: string;
  essences?: Essences;
  turned?: boolean;
}

/** Cards in rows of three from `y`; the height they take. */
function cardRows(entries: Entry[], y: number, out: ComponentChildren[], key: string): number {
  let top = y;
  for (let i = 0; i < entries.length; i += PER_ROW) {
    const row = entries.slice(i, i + PER_ROW).map((e) => ({ e, laid: layCard(e.card, e.essences !== undefined && hasAny(e.essences)) }));
    const h = Math.max(...row.map((r) => r.laid.h));
    row.forEach(({ e, laid }, j) => {
      out.push(
        <CardView key={`${key}-${i + j}-${e.card.id}`} laid={laid} x={6 + j * (CW + GAP)} y={top} h={h} place={e.place} essences={e.essences && hasAny(e.essences) ? e.essences : undefined} turned={e.turned} />,
      );
    });
    top += h + GAP;
  }
  return top - y;
}

function hasAny(e: Essences): boolean {
  return ESSENCES.some((x) => (e[x.key] ?? 0) > 0);
}

// ---- the board ------------------------------------------------------------------------------

function ResarcanaBoard(props: BoardProps<View, Move>) {
  const { view, header } = props;
  const targets = useTargets(props, useCallback(placeOf(view), [view]));
  const over = view.phase === Phase.OVER || header.status === GameStatus.FINISHED;
  const steps = view.step.split(" | ");
  const status = over ? (
    <>The game is over (round {view.round}).</>
  ) : (
    <>
      <strong>{PHASES[view.phase]}</strong>
      {view.round > 0 && <> · round {view.round}</>}
      {view.toAct.map((s, i) => (
        <span key={s}>
          {" · "}
          <strong>{s === view.viewer ? "You" : SEATS[s]}</strong> to {steps[i] ?? steps[0]}
        </span>
      ))}
    </>
  );
  const facts = <>{view.victoryPointsToWin} VP to win · First Player token: {SEATS[view.firstPlayer]}{view.firstPlayerTokenPassed ? " (passed)" : ""}</>;
  const players = [...view.players].sort((a, b) => (a.seat === view.viewer ? 1 : b.seat === view.viewer ? -1 : a.seat - b.seat));
  return (
    <BoardFrame game="resarcana" header={header} targets={targets} status={status} facts={facts}>
      <Middle view={view} />
      {players.map((p) => (
        <Tableau key={p.seat} view={view} player={p} acting={!over && view.toAct.includes(p.seat)} />
      ))}
      {view.viewer !== undefined && <Own view={view} />}
    </BoardFrame>
  );
}

function Section(props: { title: string; y: number }) {
  return (
    <text x={8} y={props.y + 13} class="section">
      {props.title}
    </text>
  );
}

function Middle(props: { view: View }) {
  const { view } = props;
  const out: ComponentChildren[] = [];
  let y = 4;
  // The general supply: where `gain` takes essences from.
  out.push(<Section key="s-supply" title="Supply" y={y} />);
  ESSENCES.forEach((e, i) => {
    const x = 74 + i * 60;
    out.push(
      <Target key={`supply-${e.key}`} place={`supply:${e.essence}`} name={`${e.name} from the supply`} x={x - 12} y={y} w={50} h={22}>
        <title>{`${e.name} in the general supply`}</title>
        <EssenceToken e={e} x={x} y={y + 11} r={9} />
        <text x={x + 13} y={y + 15} class="small">{e.name}</text>
      </Target>,
    );
  });
  y += 30;
  if (view.placesOfPower.length) {
    out.push(<Section key="s-places" title="Places of Power" y={y} />);
    y += 20;
    y += cardRows(view.placesOfPower.map((c) => ({ card: c, place: `card:${c.id}` })), y, out, "pop");
  }
  out.push(<Section key="s-mon" title={`Monuments · ${view.monumentDeckCount} face down in the deck`} y={y} />);
  y += 20;
  const mons: Entry[] = view.monuments.map((c) => ({ card: c, place: `card:${c.id}` }));
  const before = out.length;
  const monH = cardRows(mons, y, out, "mon");
  // The deck beside the face-up Monuments (in the row's free slot, or under it).
  const slotIdx = mons.length % PER_ROW;
  const deckX = 6 + slotIdx * (CW + GAP);
  const deckY = slotIdx === 0 && mons.length > 0 ? y + monH : y;
  out.splice(
    before,
    0,
    <Target key="mon-deck" place="monument-deck" name="the Monument deck" x={deckX} y={deckY} w={CW} h={90}>
      <title>{`the Monument deck: ${view.monumentDeckCount} face down`}</title>
      <rect class="card-back" x={deckX + 4} y={deckY + 4} width={CW - 4} height={86} rx={7} />
      <rect class="card-back" x={deckX} y={deckY} width={CW - 4} height={86} rx={7} />
      <text x={deckX + CW / 2 - 2} y={deckY + 38} text-anchor="middle" class="deck-label">Monument deck</text>
      <text x={deckX + CW / 2 - 2} y={deckY + 58} text-anchor="middle" class="deck-count">{view.monumentDeckCount}</text>
    </Target>,
  );
  y += slotIdx === 0 && mons.length > 0 ? monH + 96 : Math.max(monH, 96);
  if (view.magicItems.length) {
    out.push(<Section key="s-items" title="Magic Items in the middle" y={y} />);
    y += 20;
    y += cardRows(view.magicItems.map((c) => ({ card: c, place: `card:${c.id}` })), y, out, "items");
  }
  return (
    <Panel id="middle" w={W} h={y + 2} label="The middle of the table: Places of Power, Monuments, Magic Items and the supply">
      <rect class="table" x={0} y={0} width={W} height={y + 2} rx={10} />
      {out}
    </Panel>
  );
}

function Tableau(props: { view: View; player: Player; acting: boolean }) {
  const { view, player, acting } = props;
  const seat = player.seat;
  const you = view.viewer === seat;
  const name = SEATS[seat] ?? `seat ${seat}`;
  const out: ComponentChildren[] = [];
  let y = 40;
  // The pool, where `pay` takes essences from.
  ESSENCES.forEach((e, i) => {
    const x = 18 + i * 56;
    const n = player.pool?.[e.key] ?? 0;
    out.push(
      <Target key={`pool-${e.key}`} place={`pool:${seat}:${e.essence}`} name={`${e.name} from your pool`} x={x - 11} y={y} w={48} h={24}>
        <title>{`${n} ${e.name} in ${you ? "your" : `${name}'s`} pool`}</title>
        <EssenceToken e={e} x={x} y={y + 12} r={10} />
        <text x={x + 14} y={y + 17} class="pool-n">{n}</text>
      </Target>,
    );
  });
  const pile = (
    <Target key="pile" place={`pile:${seat}`} name={`${you ? "your" : name + "'s"} draw pile`} x={W - 86} y={y} w={80} h={24}>
      <title>{`hand ${player.handCount}, draw pile ${player.deckCount}`}</title>
      <text x={W - 10} y={y + 10} text-anchor="end" class="tiny">hand {player.handCount}</text>
      <text x={W - 10} y={y + 22} text-anchor="end" class="tiny">draw pile {player.deckCount}</text>
    </Target>
  );
  out.push(pile);
  y += 32;
  if (view.phase === Phase.DRAFT) {
    out.push(<text key="draft" x={10} y={y + 10} class="small">Draft: {player.draftKeptCount} kept so far</text>);
    y += 18;
  }
  if (view.phase === Phase.MAGE) {
    out.push(<text key="mage" x={10} y={y + 10} class="small">Mage: {player.mageChosen ? "chosen (secret)" : "choosing"}</text>);
    y += 18;
  }
  const entries: Entry[] = player.components.map((c: Component) => ({ card: c.card!, place: `card:${c.card!.id}`, essences: c.essences, turned: c.turned })).filter((e) => e.card);
  y += cardRows(entries, y, out, `t${seat}`);
  if (player.discard.length) {
    out.push(<text key="d-title" x={10} y={y + 12} class="small">Discard pile ({player.discard.length}):</text>);
    y += 18;
    y += chips(player.discard, y, out, (c) => `discarded:${c.id}`, `d${seat}`);
  }
  const h = y + 6;
  return (
    <Panel id={`tableau-${seat}`} w={W} h={h} label={`${name}'s tableau`}>
      <rect class={acting ? "player-mat acting-mat" : "player-mat"} x={1} y={1} width={W - 2} height={h - 2} rx={10} />
      <text x={10} y={24} class="player-name">
        {name}
        {you ? " (you)" : ""}
        {acting && !player.passed ? " ◀" : ""}
      </text>
      <g class="vp big-vp">
        <title>{`${player.victoryPoints} victory points`}</title>
        <circle cx={W - 24} cy={20} r={14} />
        <text x={W - 24} y={20} dy="0.35em" text-anchor="middle">{player.victoryPoints}</text>
      </g>
      <text x={W - 44} y={25} text-anchor="end" class="small">VP</text>
      {view.firstPlayer === seat && (
        <g class="first-token">
          <title>{`the First Player token (1 VP)${view.firstPlayerTokenPassed ? ", on its Passed side" : ""}`}</title>
          <rect x={W - 170} y={9} width={104} height={22} rx={11} />
          <text x={W - 118} y={24} text-anchor="middle">{view.firstPlayerTokenPassed ? "First · passed" : "First Player"}</text>
        </g>
      )}
      {player.passed && (
        <text x={W - 178} y={25} text-anchor="end" class="small passed">passed</text>
      )}
      {out}
    </Panel>
  );
}

/** Card names as small chips in rows (discard piles, the draft given). */
function chips(cards: Card[], y: number, out: ComponentChildren[], place: ((c: Card) => string) | undefined, key: string): number {
  let x = 8;
  let top = y;
  cards.forEach((c, i) => {
    const label = cut(c.name, 22);
    const w = label.length * 6 + 14;
    if (x + w > W - 6) {
      x = 8;
      top += 24;
    }
    const chip = (
      <g key={`${key}-${i}`} class="chip-g">
        <title>{c.name}</title>
        <rect class="name-chip" x={x} y={top} width={w} height={20} rx={10} />
        <text x={x + w / 2} y={top + 14} text-anchor="middle" class="tiny">{label}</text>
      </g>
    );
    out.push(
      place ? (
        <Target key={`${key}-${i}`} place={place(c)} name={c.name} x={x} y={top} w={w} h={20} shape={{ kind: "rect", rx: 10 }}>
          {chip}
        </Target>
      ) : (
        chip
      ),
    );
    x += w + 6;
  });
  return top + 24 - y;
}

function Own(props: { view: View }) {
  const { view } = props;
  const out: ComponentChildren[] = [];
  let y = 4;
  const section = (title: string, cards: Card[], place: (c: Card) => string | undefined, key: string) => {
    if (!cards.length) return;
    out.push(<Section key={`s-${key}`} title={title} y={y} />);
    y += 20;
    y += cardRows(cards.map((c) => ({ card: c, place: place(c) })), y, out, key);
  };
  section(`Your hand (${view.hand.length})`, view.hand, (c) => `hand:${c.id}`, "hand");
  section("Your draft: keep one", view.draftOffer, (c) => `draft:${c.id}`, "offer");
  section("Your Mages: choose one", view.mageOptions, (c) => `mage:${c.id}`, "mages");
  if (view.mageChoice) section("Your Mage choice (secret)", [view.mageChoice], () => undefined, "choice");
  section("Monuments you are looking at: return them on the deck", view.looking, (c) => `looking:${c.id}`, "looking");
  if (view.draftKept.length) {
    out.push(<text key="kept" x={8} y={y + 12} class="small">Kept so far:</text>);
    y += 18;
    y += chips(view.draftKept, y, out, undefined, "kept");
  }
  if (view.draftGiven.length) {
    out.push(<text key="given" x={8} y={y + 12} class="small">{view.phase === Phase.DRAFT ? "Set aside for the rival:" : "You gave the rival in the draft:"}</text>);
    y += 18;
    y += chips(view.draftGiven, y, out, undefined, "given");
  }
  if (out.length === 0) {
    out.push(<text key="empty" x={8} y={y + 14} class="small">Your hand is empty.</text>);
    y += 22;
  }
  return (
    <Panel id="own" w={W} h={y + 4} label="Your hand and what only you see">
      <rect class="own-mat" x={1} y={1} width={W - 2} height={y + 2} rx={10} />
      {out}
    </Panel>
  );
}

export const resarcana: BoardModule<View, Move> = { view: ViewSchema, Board: ResarcanaBoard };
