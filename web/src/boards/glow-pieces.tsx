// Glow's pieces, shared by its board and its journey boards: dice in their colours with
// their faces, a card's condition (the dice it needs, crossed symbols, identical groups)
// and effect (bursts of light, footprints, fireflies, rerolls, skull, spells), and the
// companion and adventurer cards.
import type { ComponentChildren } from "preact";
import { Colour, Symbol as Face, type Adventurer, type Companion, type Condition, type Die, type Effect } from "../gen/tabletop/glow/v1/glow_pb";
import { ELEMENT_ICON, Icon } from "./svg/icons";
import { cut, wrap } from "./svg/text";

export const DIE_COLOURS: Record<number, { name: string; fill: string; ink: string }> = {
  [Colour.GREEN]: { name: "green", fill: "#3d9b47", ink: "#fff" },
  [Colour.BLUE]: { name: "blue", fill: "#2c5fb3", ink: "#fff" },
  [Colour.AZURE]: { name: "azure", fill: "#49b6e3", ink: "#0b2a3a" },
  [Colour.RED]: { name: "red", fill: "#d23c2f", ink: "#fff" },
  [Colour.ORANGE]: { name: "orange", fill: "#ec8a1f", ink: "#3a1d00" },
  [Colour.PURPLE]: { name: "purple", fill: "#8a4cc0", ink: "#fff" },
  [Colour.YELLOW]: { name: "yellow", fill: "#f2c72c", ink: "#3a2c00" },
  [Colour.BLACK]: { name: "black", fill: "#232126", ink: "#fff" },
};

export const FACES: Record<number, string> = {
  [Face.AIR]: "air",
  [Face.WATER]: "water",
  [Face.ROCK]: "rock",
  [Face.FIRE]: "fire",
  [Face.NATURE]: "nature",
  [Face.FOOTPRINT]: "footprint",
  [Face.BURST]: "burst of light",
  [Face.CURSE]: "-2 bursts",
};

/** The colour a player's pieces are drawn in: their adventurer's, else one by seat. */
export function playerColour(colour: Colour | undefined, seat: number): { fill: string; ink: string; name: string } {
  const fallback = [Colour.RED, Colour.BLUE, Colour.GREEN, Colour.YELLOW][seat % 4]!;
  return DIE_COLOURS[colour || fallback]!;
}

/** A face's symbol centred at (x, y). */
export function FaceIcon(props: { face: Face; x: number; y: number; size: number; class?: string }) {
  const { face, x, y, size } = props;
  if (face === Face.FOOTPRINT) return <Icon name="footprint" x={x} y={y} size={size} class={props.class} />;
  if (face === Face.BURST) return <Icon name="burst" x={x} y={y} size={size} class={props.class} />;
  if (face === Face.CURSE) {
    return (
      <text x={x} y={y} dy="0.35em" text-anchor="middle" font-size={size * 0.75} font-weight="800" class={props.class}>
        -2
      </text>
    );
  }
  const name = FACES[face];
  return name ? <Icon name={ELEMENT_ICON[name] ?? name} x={x} y={y} size={size} class={props.class} /> : null;
}

export function dieName(die: Die): string {
  const colour = DIE_COLOURS[die.colour]?.name ?? "";
  return `${die.large ? "large" : "small"} ${colour} die showing ${FACES[die.face] ?? "nothing"}`;
}

/** A die at (x, y), its top left; `size` across. */
export function DieView(props: { die: Die; x: number; y: number; size?: number; mark?: "cancelled" | "used" | "picked"; children?: ComponentChildren }) {
  const { die, x, y } = props;
  const size = props.size ?? (die.large ? 26 : 20);
  const c = DIE_COLOURS[die.colour] ?? { fill: "#999", ink: "#000", name: "?" };
  return (
    <g class={`die${props.mark ? ` ${props.mark}` : ""}`} style={{ color: c.ink }}>
      <title>{dieName(die) + (props.mark ? ` (${props.mark})` : "")}</title>
      <rect x={x} y={y} width={size} height={size} rx={size * 0.22} fill={c.fill} class="die-body" />
      {die.face !== Face.UNSPECIFIED && <FaceIcon face={die.face} x={x + size / 2} y={y + size / 2} size={size * 0.62} />}
      {props.mark === "cancelled" && <path d={`M${x + 2} ${y + 2}L${x + size - 2} ${y + size - 2}M${x + size - 2} ${y + 2}L${x + 2} ${y + size - 2}`} class="die-cross" />}
      {props.children}
    </g>
  );
}

/** A condition as symbols: the faces needed, "N alike", crossed symbols. */
export function ConditionView(props: { condition: Condition | undefined; x: number; y: number; size: number }) {
  const { condition, y, size } = props;
  if (!condition || (!condition.need.length && !condition.same && !condition.avoid.length)) return null;
  let x = props.x;
  const out: ComponentChildren[] = [];
  for (const [i, f] of condition.need.entries()) {
    out.push(<FaceIcon key={`n${i}`} face={f} x={x + size / 2} y={y} size={size} class="cond-icon" />);
    x += size + 1;
  }
  if (condition.same) {
    out.push(
      <text key="same" x={x} y={y} dy="0.35em" class="cond-text">
        {condition.same}×=
      </text>,
    );
    x += size * 1.6;
  }
  for (const [i, f] of condition.avoid.entries()) {
    out.push(
      <g key={`a${i}`} class="crossed">
        <FaceIcon face={f} x={x + size / 2} y={y} size={size} class="cond-icon" />
        <circle cx={x + size / 2} cy={y} r={size / 2 + 1} class="cross-ring" />
        <line x1={x} y1={y + size / 2} x2={x + size} y2={y - size / 2} class="cross-line" />
      </g>,
    );
    x += size + 3;
  }
  return (
    <g class="condition">
      <title>{conditionText(condition)}</title>
      {out}
    </g>
  );
}

export function conditionText(c: Condition | undefined): string {
  if (!c) return "";
  const words = c.text.split(/\s+/).filter(Boolean);
  const out: string[] = [];
  for (const w of words) {
    if (w.startsWith("!")) out.push(`no ${w.slice(1)}`);
    else if (/^\d+$/.test(w) && out[out.length - 1] === "same") out[out.length - 1] = `${w} identical`;
    else out.push(w);
  }
  return out.join(" + ");
}

/** An effect's parts, as words a person reads ("+3 bursts", "skull"). */
export function effectWords(e: Effect | undefined): string[] {
  if (!e) return [];
  const out: string[] = [];
  const n = (v: number) => (v > 0 ? `+${v}` : String(v));
  if (e.bursts) out.push(`${n(e.bursts)} burst${Math.abs(e.bursts) === 1 ? "" : "s"}`);
  if (e.footprints) out.push(`${n(e.footprints)} footprint${Math.abs(e.footprints) === 1 ? "" : "s"}`);
  if (e.fireflies) out.push(`${n(e.fireflies)} firefl${Math.abs(e.fireflies) === 1 ? "y" : "ies"}`);
  if (e.rerolls) out.push(`${n(e.rerolls)} reroll${Math.abs(e.rerolls) === 1 ? "" : "s"}`);
  if (e.skull) out.push("skull");
  if (e.spell) out.push("spells on the rivals");
  if (e.resurrect) out.push("raise a companion");
  return out;
}

/** An effect as symbols with numbers from (x, y); the width it takes. */
export function EffectView(props: { effect: Effect | undefined; x: number; y: number; size: number }) {
  const { effect, y, size } = props;
  if (!effect) return null;
  let x = props.x;
  const out: ComponentChildren[] = [];
  const item = (key: string, value: number, icon: string, cls: string) => {
    const text = value > 0 ? `+${value}` : String(value);
    const tw = text.length * size * 0.62;
    out.push(
      <g key={key} class={`eff ${cls}${value < 0 ? " loss" : ""}`}>
        <text x={x} y={y} dy="0.35em" class="eff-n" font-size={size}>
          {text}
        </text>
        <Icon name={icon} x={x + tw + size * 0.55} y={y} size={size} />
      </g>,
    );
    x += tw + size * 1.1 + 3;
  };
  if (effect.bursts) item("b", effect.bursts, "burst", "burst");
  if (effect.footprints) item("f", effect.footprints, "footprint", "foot");
  if (effect.fireflies) item("ff", effect.fireflies, "firefly", "firefly");
  if (effect.rerolls) item("r", effect.rerolls, "reroll", "reroll");
  if (effect.skull) {
    out.push(<Icon key="skull" name="skull" x={x + size / 2} y={y} size={size} class="skull" />);
    x += size + 3;
  }
  if (effect.spell) {
    out.push(
      <text key="spell" x={x} y={y} dy="0.35em" class="eff-n">
        spells
      </text>,
    );
    x += size * 2.4;
  }
  if (effect.resurrect) {
    out.push(
      <text key="raise" x={x} y={y} dy="0.35em" class="eff-n">
        raise
      </text>,
    );
  }
  return (
    <g class="effect">
      <title>{effectWords(effect).join(", ")}</title>
      {out}
    </g>
  );
}

/** The width of every Glow panel (viewBox units). */
export const W = 392;

export const CARD_W = 72;
export const CARD_H = 104;

/** A companion card at (x, y): name, end-game bursts, powers, condition → effect. */
export function CompanionCard(props: { card: Companion; x: number; y: number; state?: string; spell?: boolean }) {
  const { card, x, y } = props;
  const name = wrap(card.name, 10, 2);
  const powers: string[] = [];
  if (card.fireflies) powers.push(`${card.fireflies} firefl${card.fireflies === 1 ? "y" : "ies"}`);
  if (card.rerolls) powers.push(`${card.rerolls} reroll a round`);
  if (card.sketal) powers.push(`${card.sketalColour ? DIE_COLOURS[card.sketalColour]?.name : "any"} large die`);
  if (card.blackDie) powers.push("the black die");
  const label = `${card.name} #${card.id}${card.bursts ? `, ${card.bursts > 0 ? "+" : ""}${card.bursts} bursts at the end` : ""}${powers.length ? `, ${powers.join(", ")}` : ""}: ${conditionText(card.condition) || "no condition"} → ${effectWords(card.effect).join(", ") || "nothing"}`;
  return (
    <g class={`companion${props.state ? ` ${props.state}` : ""}`}>
      <title>{label + (props.state ? ` (${props.state})` : "")}</title>
      <rect class="gcard" x={x} y={y} width={CARD_W} height={CARD_H} rx={6} />
      {name.map((line, i) => (
        <text key={i} x={x + 5} y={y + 13 + i * 12} class="gcard-name">
          {line}
        </text>
      ))}
      <text x={x + 5} y={y + 13 + name.length * 12} class="gcard-id">
        #{card.id} · {card.pack}
      </text>
      {card.bursts !== 0 && (
        <g class={card.bursts > 0 ? "end-bursts" : "end-bursts loss"}>
          <Icon name="burst" x={x + CARD_W - 11} y={y + 11} size={18} />
          <text x={x + CARD_W - 11} y={y + 11} dy="0.35em" text-anchor="middle" class="end-n">
            {card.bursts}
          </text>
        </g>
      )}
      <Powers card={card} x={x + 5} y={y + 52} />
      <line x1={x + 4} x2={x + CARD_W - 4} y1={y + 62} y2={y + 62} class="gcard-rule" />
      <ConditionView condition={card.condition} x={x + 5} y={y + 74} size={12} />
      <text x={x + 5} y={y + 90} dy="0.35em" class="arrow">→</text>
      <EffectView effect={card.effect} x={x + 17} y={y + 90} size={11} />
      {props.spell && (
        <g class="spell-on">
          <rect x={x + CARD_W - 24} y={y + CARD_H - 18} width={22} height={14} rx={3} />
          <text x={x + CARD_W - 13} y={y + CARD_H - 8} text-anchor="middle">spell</text>
        </g>
      )}
    </g>
  );
}

function Powers(props: { card: Companion; x: number; y: number }) {
  const { card, y } = props;
  let x = props.x;
  const out: ComponentChildren[] = [];
  for (let i = 0; i < card.fireflies; i++) {
    out.push(<Icon key={`f${i}`} name="firefly" x={x + 6} y={y} size={12} class="power-firefly" />);
    x += 13;
  }
  for (let i = 0; i < card.rerolls; i++) {
    out.push(<Icon key={`r${i}`} name="reroll" x={x + 6} y={y} size={12} class="power-reroll" />);
    x += 13;
  }
  if (card.sketal) {
    const c = DIE_COLOURS[card.sketalColour];
    out.push(<rect key="sk" x={x} y={y - 6} width={12} height={12} rx={2.5} fill={c?.fill ?? "url(#glow-rainbow)"} class="mini-die" />);
    x += 14;
  }
  if (card.blackDie) out.push(<rect key="bk" x={x} y={y - 5} width={10} height={10} rx={2} fill="#232126" class="mini-die" />);
  return <g class="powers">{out}</g>;
}

/** The adventurer card: name, dice, condition → effect, end-game bursts. */
export function AdventurerCard(props: { card: Adventurer; x: number; y: number; w: number; resolved?: boolean }) {
  const { card, x, y, w } = props;
  const c = DIE_COLOURS[card.colour];
  return (
    <g class={props.resolved ? "adventurer resolved" : "adventurer"}>
      <title>{`${card.name}: ${card.dice} large ${c?.name ?? ""} dice; ${conditionText(card.condition) || "no condition"} → ${effectWords(card.effect).join(", ") || "nothing"}${card.bursts ? `; ${card.bursts} bursts at the end` : ""}`}</title>
      <rect class="gcard adventurer-card" x={x} y={y} width={w} height={CARD_H} rx={6} style={{ stroke: c?.fill }} />
      <rect x={x} y={y} width={w} height={20} rx={6} fill={c?.fill} />
      <text x={x + 6} y={y + 14} class="adv-name" style={{ fill: c?.ink }}>
        {cut(card.name, 12)}
      </text>
      {Array.from({ length: card.dice }, (_, i) => (
        <rect key={i} x={x + 6 + i * 15} y={y + 26} width={12} height={12} rx={2.5} fill={c?.fill} class="mini-die" />
      ))}
      {card.bursts !== 0 && (
        <g class="end-bursts">
          <Icon name="burst" x={x + w - 12} y={y + 33} size={18} />
          <text x={x + w - 12} y={y + 33} dy="0.35em" text-anchor="middle" class="end-n">
            {card.bursts}
          </text>
        </g>
      )}
      <line x1={x + 4} x2={x + w - 4} y1={y + 62} y2={y + 62} class="gcard-rule" />
      <ConditionView condition={card.condition} x={x + 5} y={y + 74} size={12} />
      {effectWords(card.effect).length > 0 && (
        <>
          <text x={x + 5} y={y + 90} dy="0.35em" class="arrow">→</text>
          <EffectView effect={card.effect} x={x + 17} y={y + 90} size={11} />
        </>
      )}
      {!card.condition?.text && effectWords(card.effect).length === 0 && (
        <text x={x + 5} y={y + 80} class="gcard-id">no effect</text>
      )}
    </g>
  );
}
