// Shén's board: the gridded playing field (spaces a1.., vertices A1.. on the Spirit
// Path) with the Anchor Points and who holds them, the Realm Stones, the Shén counters,
// the Avatars in their spaces and the Spirit Avatars on their vertices (Ready or
// Exhausted, with their Items); the combat being fought and the last dice; every clan
// (its Realm, team, hand, deck, discard pile, lost cards, Remains in Play, Anchor Points);
// the Avatars in play with their trait bars; and the viewer's hand.
//
// Targets: a vertex (set the Realm Stone, place a Shén counter, a Spirit Avatar's step,
// a target, a siege on a Realm Stone), a space (a step or a Melee Attack into it, hold,
// claim an Anchor Point, a target, a Ranged Attack, a retreat), the moving Avatar (its
// abilities, stop), a card in the hand (play, lose it), the viewer's deck (draw, lose the
// top card) and discard pile (lose from it), and a clan (the foe who loses cards).
import type { ComponentChildren } from "preact";
import { useCallback } from "preact/hooks";
import { GameStatus, type GameHeader } from "../gen/tabletop/common/v1/game_pb";
import {
  CardType,
  CombatKind,
  EffectKind,
  Pending,
  Step,
  Timing,
  ViewSchema,
  type Avatar,
  type Card,
  type Effect,
  type Move,
  type Traits,
  type View,
} from "../gen/tabletop/shen/v1/shen_pb";
import { seatLabel } from "../format";
import { BoardFrame, Panel } from "./svg/frame";
import { cut, fits, Lines, wrap } from "./svg/text";
import { Target, useTargets } from "./svg/targets";
import type { BoardModule, BoardProps } from "./types";

const CLAN_COLOURS = ["#d0402f", "#2f93cf", "#3b9a4b", "#d9a81c", "#b0489e", "#e67e22"];
const STEPS: Record<number, string> = {
  [Step.PLACE_REALM_STONE]: "Pre-Game: set a Realm Stone",
  [Step.RECOVERY_AND_SET_UP]: "1) Recovery and Set-Up Phase: draw a card or place a Shén counter",
  [Step.CELESTIAL_INFLUENCE]: "2) Celestial Influence Phase: play a card",
  [Step.CLAIM_MOVE_AND_ATTACK]: "3) Claim, Move, and Attack Phase",
  [Step.MOVING]: "3) Claim, Move, and Attack Phase: an Avatar is moving",
  [Step.AFTER_MOVE]: "3) Claim, Move, and Attack Phase: after a move",
  [Step.OVER]: "The game is over",
};
const PENDING: Record<number, string> = {
  [Pending.LOSE_CARDS]: "choose a card to lose",
  [Pending.REMOVE_AVATAR_OR_LOSE_CARDS]: "give the Avatar up or lose cards",
  [Pending.RETREAT]: "choose where the Avatar retreats",
  [Pending.CHOOSE_FOE]: "choose the opponent who loses cards",
  [Pending.TARGET]: "choose a target",
  [Pending.COMBAT_SUPPORT]: "combat: play a card, use an ability, or pass",
  [Pending.WINNER_ABILITY]: "the winning Avatar may use an ability",
};
const COMBATS: Record<number, string> = { [CombatKind.MELEE]: "Melee Attack", [CombatKind.RANGED]: "Ranged Attack", [CombatKind.REALM_STONE]: "attack on a Realm Stone" };

function clanColour(seat: number): string {
  return CLAN_COLOURS[seat % CLAN_COLOURS.length]!;
}

/** "c4" is a space, "C4" a vertex. */
function where(location: string): string {
  return location && location[0] === location[0]!.toUpperCase() ? `v:${location}` : `s:${location}`;
}

// ---- where each move is made -----------------------------------------------------------

function placeOf(view: View, viewer: number | undefined) {
  return (move: Move): string | undefined => {
    const k = move.kind;
    switch (k.case) {
      case "stone":
      case "shen":
        return `v:${k.value.vertex}`;
      case "play":
        return `hand:${k.value.card}`;
      case "loseHand":
        return `hand:${k.value.card}`;
      case "target":
        return where(k.value.location);
      case "foe":
        return `clan:${k.value.seat}`;
      case "claim":
        return `s:${k.value.space}`;
      case "siege":
        return `v:${k.value.stone}`;
      case "step":
        return where(k.value.destination);
      case "hold":
        return where(k.value.avatar);
      case "ability":
      case "stop":
        return view.moving ? where(view.moving) : undefined;
      case "ranged":
        return `s:${k.value.target}`;
      case "retreat":
        return where(k.value.location);
      case "draw":
      case "loseDeck":
        return `deck:${viewer}`;
      case "loseDiscard":
        return `discard:${viewer}`;
      default:
        return undefined; // pass, end, remove avatar, lose cards
    }
  };
}

// ---- the field --------------------------------------------------------------------------

const W = 400;
const ML = 34; // left margin (row numbers)
const MT = 30; // top margin (column letters)

function geometry(size: number) {
  const cell = Math.floor((W - ML - 12) / size);
  const vx = (col: number) => ML + col * cell;
  const vy = (row: number) => MT + row * cell;
  return { cell, vx, vy, h: MT + size * cell + 14 };
}

function parse(location: string): [number, number] {
  return [location.toLowerCase().charCodeAt(0) - 97, Number(location.slice(1)) - 1];
}

function ShenBoard(props: BoardProps<View, Move>) {
  const { view, header } = props;
  const viewer = header.viewer;
  const targets = useTargets(props, useCallback(placeOf(view, viewer), [view, viewer]));
  const over = view.step === Step.OVER || header.status === GameStatus.FINISHED;
  const cards = new Map(view.cards.map((c) => [c.id, c]));
  const pendingWho = view.pending !== Pending.NONE && view.pending !== Pending.UNSPECIFIED ? view.toAct[0] : undefined;
  const name = (s: number) => (s === viewer ? "You" : seatLabel(header, s));
  const status = over ? (
    <>
      The game is over: {view.winners.length ? `${view.winners.map((s) => seatLabel(header, s)).join(" and ")} won` : "nobody won"}
      {view.endReason && ` (${view.endReason.toLowerCase().replace(/_/g, " ")})`}.
    </>
  ) : (
    <>
      {view.turn > 0 && <>Turn {view.turn} · </>}
      <strong>{view.active === viewer ? "Your turn" : `${seatLabel(header, view.active)}'s turn`}</strong>: {STEPS[view.step] ?? ""}
      {pendingWho !== undefined && (
        <>
          {" · "}
          <strong>{name(pendingWho)}</strong> to {PENDING[view.pending]}
          {view.pendingCount > 0 && ` (${view.pendingCount})`}
        </>
      )}
    </>
  );
  const facts: ComponentChildren[] = [];
  if (view.playing) facts.push(<span key="p">Playing {cards.get(view.playing)?.name ?? view.playing}. </span>);
  if (view.moving) facts.push(<span key="m">The Avatar at {view.moving} is moving{view.step === Step.MOVING ? `, ${view.stepsLeft} step${view.stepsLeft === 1 ? "" : "s"} left` : ""}. </span>);
  if (view.combat) {
    const c = view.combat;
    facts.push(
      <span key="c">
        {COMBATS[c.kind] ?? "Combat"}: {seatLabel(header, c.attacker)} from {c.origin} against {seatLabel(header, c.defender)} at {c.target}
        {(c.attackerPower > 0 || c.defenderPower > 0) && `, bonuses +${c.attackerPower}/+${c.defenderPower}`}
        {(c.attackerWard > 0 || c.defenderWard > 0) && `, wards ${c.attackerWard}/${c.defenderWard}`}.{" "}
      </span>,
    );
  }
  const roll = view.combat?.dice ?? view.lastRoll;
  if (view.step === Step.PLACE_REALM_STONE && view.firstPlayerRolls.length) {
    const last = view.firstPlayerRolls[view.firstPlayerRolls.length - 1]!;
    facts.push(
      <span key="r">
        2d6 for the first player: {last.totals.map((t, s) => (t ? `${seatLabel(header, s)} ${t}` : "")).filter(Boolean).join(", ")}.{" "}
      </span>,
    );
  }
  return (
    <BoardFrame game="shen" header={header} targets={targets} status={status} facts={facts.length ? facts : undefined}>
      <Field view={view} cards={cards} header={header} />
      {roll && (roll.attacker.length > 0 || roll.defender.length > 0) && <Dice attacker={roll.attacker} defender={roll.defender} current={!!view.combat?.dice} />}
      <Clans view={view} header={header} cards={cards} />
      {view.avatars.length > 0 && <Avatars view={view} header={header} cards={cards} />}
      {viewer !== undefined && <Hand view={view} cards={cards} />}
    </BoardFrame>
  );
}

function Field(props: { view: View; cards: Map<string, Card>; header: GameHeader }) {
  const { view, cards, header } = props;
  const n = view.size;
  const { cell, vx, vy, h } = geometry(n);
  const anchors = new Map(view.anchorPoints.map((a) => [a.space, a.holder]));
  const counters = new Map(view.shenCounters.map((c) => [c.vertex, c.seat]));
  const stones = new Map(view.realmStones.map((s) => [s.vertex, s.seat]));
  const avatars = new Map(view.avatars.map((a) => [a.location, a]));
  const out: ComponentChildren[] = [];
  // Labels: vertices in capitals at the lines, spaces in lower case between them.
  for (let i = 0; i <= n; i++) {
    out.push(
      <text key={`vl${i}`} x={vx(i)} y={MT - 16} text-anchor="middle" class="vlabel">{String.fromCharCode(65 + i)}</text>,
      <text key={`vr${i}`} x={ML - 24} y={vy(i)} dy="0.35em" text-anchor="middle" class="vlabel">{i + 1}</text>,
    );
    if (i < n) {
      out.push(
        <text key={`sl${i}`} x={vx(i) + cell / 2} y={MT - 5} text-anchor="middle" class="slabel">{String.fromCharCode(97 + i)}</text>,
        <text key={`sr${i}`} x={ML - 11} y={vy(i) + cell / 2} dy="0.35em" text-anchor="middle" class="slabel">{i + 1}</text>,
      );
    }
  }
  // Spaces.
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      const space = `${String.fromCharCode(97 + c)}${r + 1}`;
      const x = vx(c);
      const y = vy(r);
      const anchor = anchors.has(space);
      const holder = anchors.get(space);
      const avatar = avatars.get(space);
      const inset = Math.min(7, cell * 0.16);
      out.push(
        <Target key={space} place={`s:${space}`} name={`space ${space}`} x={x + inset} y={y + inset} w={cell - 2 * inset} h={cell - 2 * inset}>
          <title>{`space ${space}${anchor ? `: an Anchor Point${holder !== undefined ? ` held by ${seatLabel(header, holder)}` : ", unclaimed"}` : ""}`}</title>
          <rect class={(r + c) % 2 ? "space dark" : "space"} x={x} y={y} width={cell} height={cell} />
          {anchor && <AnchorMark x={x + cell / 2} y={y + cell / 2} r={cell * 0.36} holder={holder} />}
          {avatar && !avatar.spirit && <AvatarToken avatar={avatar} card={cards.get(avatar.card)} x={x} y={y} cell={cell} moving={view.moving === space} header={header} />}
        </Target>,
      );
    }
  }
  // The grid's lines: the Spirit Path.
  for (let i = 0; i <= n; i++) {
    out.push(
      <line key={`h${i}`} x1={vx(0)} x2={vx(n)} y1={vy(i)} y2={vy(i)} class="path-line" />,
      <line key={`v${i}`} y1={vy(0)} y2={vy(n)} x1={vx(i)} x2={vx(i)} class="path-line" />,
    );
  }
  // The combat: an arrow from the attacker to what it attacks.
  if (view.combat && view.combat.origin && view.combat.target) {
    const centre = (loc: string): [number, number] => {
      const [c, r] = parse(loc);
      return where(loc).startsWith("v:") ? [vx(c), vy(r)] : [vx(c) + cell / 2, vy(r) + cell / 2];
    };
    const [x1, y1] = centre(view.combat.origin);
    const [x2, y2] = centre(view.combat.target);
    out.push(<line key="combat" x1={x1} y1={y1} x2={x2} y2={y2} class="combat-arrow" marker-end="url(#shen-arrow)" />);
  }
  // Vertices.
  const vr = Math.max(5, Math.min(11, cell * 0.26));
  for (let r = 0; r <= n; r++) {
    for (let c = 0; c <= n; c++) {
      const vertex = `${String.fromCharCode(65 + c)}${r + 1}`;
      const x = vx(c);
      const y = vy(r);
      const stone = stones.get(vertex);
      const counter = counters.get(vertex);
      const spirit = avatars.get(vertex);
      const parts: string[] = [`vertex ${vertex}`];
      if (stone !== undefined) parts.push(`${seatLabel(header, stone)}'s Realm Stone`);
      else if (counter !== undefined) parts.push(`${seatLabel(header, counter)}'s Shén counter`);
      if (spirit) parts.push(`${cards.get(spirit.card)?.name ?? spirit.card} (${spirit.ready ? "Ready" : "Exhausted"})`);
      out.push(
        <Target key={vertex} place={`v:${vertex}`} name={`vertex ${vertex}`} x={x - vr} y={y - vr} w={2 * vr} h={2 * vr} shape={{ kind: "circle" }}>
          <title>{parts.join(": ")}</title>
          {stone !== undefined ? (
            <g class="stone">
              <rect x={x - vr} y={y - vr} width={2 * vr} height={2 * vr} rx={2} transform={`rotate(45 ${x} ${y})`} fill={clanColour(stone)} />
              <text x={x} y={y} dy="0.35em" text-anchor="middle" class="clan-n">{stone + 1}</text>
            </g>
          ) : counter !== undefined ? (
            <g class="counter">
              <circle cx={x} cy={y} r={vr * 0.78} fill={clanColour(counter)} />
              <text x={x} y={y} dy="0.35em" text-anchor="middle" class="clan-n small-n">{counter + 1}</text>
            </g>
          ) : (
            <circle cx={x} cy={y} r={Math.max(1.8, vr * 0.2)} class="vertex-dot" />
          )}
          {spirit && <circle cx={x} cy={y} r={vr + 3} class={spirit.ready ? "spirit-ring" : "spirit-ring exhausted"} stroke={clanColour(spirit.owner)} />}
        </Target>,
      );
    }
  }
  return (
    <Panel id="field" w={W} h={h} label="The playing field: spaces, the Spirit Path's vertices, Anchor Points, Realm Stones, Shén counters and Avatars">
      <defs>
        <marker id="shen-arrow" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="5" markerHeight="5" orient="auto">
          <path d="M0 0L10 5L0 10Z" class="combat-head" />
        </marker>
      </defs>
      <rect class="field-ground" x={0} y={0} width={W} height={h} rx={10} />
      {out}
    </Panel>
  );
}

function AnchorMark(props: { x: number; y: number; r: number; holder: number | undefined }) {
  const { x, y, r, holder } = props;
  return (
    <g class="anchor">
      <circle cx={x} cy={y} r={r} class="anchor-ring" stroke={holder !== undefined ? clanColour(holder) : undefined} />
      <path d={`M${x} ${y - r * 0.6}V${y + r * 0.55}M${x - r * 0.45} ${y + r * 0.15}Q${x} ${y + r * 0.9} ${x + r * 0.45} ${y + r * 0.15}M${x - r * 0.3} ${y - r * 0.3}H${x + r * 0.3}`} class="anchor-glyph" />
      {holder !== undefined && <circle cx={x + r * 0.7} cy={y - r * 0.7} r={r * 0.3} fill={clanColour(holder)} class="anchor-holder" />}
    </g>
  );
}

function shortName(card: Card | undefined, id: string): string {
  if (!card) return id;
  const words = card.name.split(" ");
  if (words.length > 1 && words[0]!.toLowerCase() === card.realm) words.shift();
  return words.join(" ");
}

function AvatarToken(props: { avatar: Avatar; card: Card | undefined; x: number; y: number; cell: number; moving: boolean; header: GameHeader }) {
  const { avatar, card, x, y, cell } = props;
  const pad = cell * 0.1;
  const name = cut(shortName(card, avatar.card), Math.max(3, Math.floor((cell - 2 * pad) / 5.6)));
  return (
    <g class={avatar.ready ? "avatar" : "avatar exhausted"}>
      <rect x={x + pad} y={y + pad} width={cell - 2 * pad} height={cell - 2 * pad} rx={cell * 0.18} fill={clanColour(avatar.owner)} class={props.moving ? "avatar-body moving" : "avatar-body"} />
      <text x={x + cell / 2} y={y + cell * 0.42} text-anchor="middle" class="avatar-name" font-size={Math.min(10, cell * 0.24)}>
        {name}
      </text>
      <text x={x + cell / 2} y={y + cell * 0.72} text-anchor="middle" class="avatar-traits" font-size={Math.min(9, cell * 0.21)}>
        {avatar.traits ? `${avatar.traits.melee}·${avatar.traits.defense}·${avatar.traits.ranged}` : ""}
        {avatar.items.length > 0 ? ` +${avatar.items.length}` : ""}
      </text>
      {!avatar.ready && (
        <text x={x + cell - pad - 2} y={y + cell - pad - 2} text-anchor="end" class="avatar-z" font-size={Math.min(9, cell * 0.2)}>
          z
        </text>
      )}
    </g>
  );
}

function Dice(props: { attacker: number[]; defender: number[]; current: boolean }) {
  const { attacker, defender } = props;
  const die = (v: number, x: number, y: number, key: string, cls: string) => (
    <g key={key} class={`die6 ${cls}`}>
      <rect x={x} y={y} width={22} height={22} rx={4} />
      <text x={x + 11} y={y + 11} dy="0.35em" text-anchor="middle">{v}</text>
    </g>
  );
  const sum = (a: number[]) => a.reduce((s, v) => s + v, 0);
  const h = 62;
  return (
    <Panel id="dice" w={W} h={h} label="The combat's dice">
      <rect class="player-mat" x={1} y={1} width={W - 2} height={h - 2} rx={10} />
      <text x={10} y={18} class="small strong-text">{props.current ? "This combat's dice" : "The last combat's dice"}</text>
      <text x={10} y={42} class="small">attack {sum(attacker)}</text>
      {attacker.map((v, i) => die(v, 78 + i * 25, 27, `a${i}`, "attack"))}
      <text x={W - 10 - defender.length * 25 - 6} y={42} text-anchor="end" class="small">defence {sum(defender)}</text>
      {defender.map((v, i) => die(v, W - 10 - (defender.length - i) * 25, 27, `d${i}`, "defence"))}
    </Panel>
  );
}

function Clans(props: { view: View; header: GameHeader; cards: Map<string, Card> }) {
  const { view, header, cards } = props;
  const teams = new Set(view.players.map((p) => p.team)).size < view.players.length;
  const rowH = 48;
  const h = view.players.length * rowH + 6;
  return (
    <Panel id="clans" w={W} h={h} label="The clans: Realm, team, cards and Anchor Points">
      {view.players.map((p, i) => {
        const y = 3 + i * rowH;
        const you = header.viewer === p.seat;
        const acting = view.toAct.includes(p.seat) && view.step !== Step.OVER;
        const rip = p.remainsInPlay.map((c) => cards.get(c)?.name ?? c);
        return (
          <Target key={p.seat} place={`clan:${p.seat}`} name={seatLabel(header, p.seat)} x={3} y={y} w={W - 6} h={rowH - 4}>
            <title>{`${seatLabel(header, p.seat)}: ${p.realm}${teams ? `, team ${p.team + 1}` : ""}, Realm Stone ${p.realmStone || "not set"}, hand ${p.handCount}, deck ${p.deckCount}, discard ${p.discard.length}, lost ${p.removed.length}${p.anchorPoints.length ? `, Anchor Points ${p.anchorPoints.join(" ")}` : ""}${p.out ? ", out of the game" : ""}`}</title>
            <rect class={acting ? "player-mat acting-mat" : "player-mat"} x={3} y={y} width={W - 6} height={rowH - 4} rx={8} />
            <rect x={9} y={y + 7} width={14} height={14} rx={3} fill={clanColour(p.seat)} transform={`rotate(45 16 ${y + 14})`} />
            <text x={30} y={y + 19} class="clan-name">
              {seatLabel(header, p.seat)}
              {you ? " (you)" : ""}
              {p.seat === view.active && view.step !== Step.OVER ? " ◀" : ""}
            </text>
            <text x={W - 10} y={y + 18} text-anchor="end" class="small">
              {p.realm}
              {teams ? ` · team ${p.team + 1}` : ""} · stone {p.realmStone || "—"}
              {p.out ? " · OUT" : ""}
            </text>
            <Target place={`deck:${p.seat}`} name={you ? "your deck" : `${seatLabel(header, p.seat)}'s deck`} x={28} y={y + 25} w={118} h={16}>
              <text x={30} y={y + 37} class="tiny">hand {p.handCount} · deck {p.deckCount}</text>
            </Target>
            <Target place={`discard:${p.seat}`} name={you ? "your discard pile" : `${seatLabel(header, p.seat)}'s discard pile`} x={150} y={y + 25} w={110} h={16}>
              <text x={152} y={y + 37} class="tiny">discard {p.discard.length} · lost {p.removed.length}</text>
            </Target>
            <text x={W - 10} y={y + 37} text-anchor="end" class="tiny">
              {p.anchorPoints.length ? `⚓ ${p.anchorPoints.join(" ")}` : ""}
              {rip.length ? ` · ${cut(rip.join(", "), 26)}` : ""}
            </text>
          </Target>
        );
      })}
    </Panel>
  );
}

function traitText(t: Traits | undefined): string {
  if (!t) return "";
  const parts = [];
  if (t.melee || t.defense || t.ranged) parts.push(`melee ${t.melee} · defence ${t.defense} · ranged ${t.ranged}`);
  if (t.movement) parts.push(`move ${t.movement}`);
  if (t.shen) parts.push(`+${t.shen} Shén`);
  return parts.join(" · ");
}

function bonusText(t: Traits | undefined): string {
  if (!t) return "";
  const parts: string[] = [];
  if (t.melee) parts.push(`+${t.melee} melee`);
  if (t.defense) parts.push(`+${t.defense} defence`);
  if (t.ranged) parts.push(`+${t.ranged} ranged`);
  if (t.movement) parts.push(`+${t.movement} move`);
  if (t.shen) parts.push(`+${t.shen} Shén to play cards`);
  return parts.join(", ");
}

function effectText(e: Effect | undefined): string {
  if (!e) return "";
  const n = e.amount;
  const range = e.range ? ` (within ${e.range})` : "";
  switch (e.kind) {
    case EffectKind.DRAW:
      return `draw ${n}`;
    case EffectKind.RECOVER:
      return `take up to ${n} from the discard pile`;
    case EffectKind.DRAIN:
      return `an opponent loses ${n} card${n === 1 ? "" : "s"}`;
    case EffectKind.PLACE_SHEN:
      return "place a Shén counter";
    case EffectKind.REMOVE_SHEN:
      return "remove an opponent's Shén counter";
    case EffectKind.CONVERT_SHEN:
      return "convert an opponent's Shén counter";
    case EffectKind.STRIKE:
      return `strike: ${n} cards or the Avatar${range}`;
    case EffectKind.BANISH:
      return `banish an Avatar${range}`;
    case EffectKind.POWER:
      return `+${n} combat power`;
    case EffectKind.WARD:
      return `lose ${n} fewer cards`;
    default:
      return "";
  }
}

/** What a card does, in words, one part per line. */
function cardText(card: Card): string[] {
  const out: string[] = [];
  switch (card.type) {
    case CardType.AVATAR:
      out.push(`${card.spirit ? "Spirit Avatar" : "Avatar"}: ${traitText(card.traits)}`);
      break;
    case CardType.ITEM:
      out.push(`Item: ${bonusText(card.bonus)}`);
      break;
    case CardType.INSTANT:
      out.push(`Instant${card.timing === Timing.COMBAT ? " (combat)" : ""}: ${effectText(card.effect)}`);
      break;
    case CardType.REMAINS_IN_PLAY:
      out.push(`Remains in Play: ${bonusText(card.aura)} for your Avatars`);
      break;
  }
  for (const a of card.abilities) out.push(`${a.name} (${a.cost} Shén${a.timing === Timing.COMBAT ? ", combat" : ""}): ${effectText(a.effect)}`);
  return out;
}

function Avatars(props: { view: View; header: GameHeader; cards: Map<string, Card> }) {
  const { view, header, cards } = props;
  const chars = fits(W - 24, 10);
  const rows = view.avatars.map((a) => {
    const card = cards.get(a.card);
    const items = a.items.map((i) => cards.get(i)?.name ?? i);
    const lines = wrap(
      `${traitText(a.traits)}${items.length ? ` · Items: ${items.join(", ")}` : ""}${card?.abilities.length ? ` · ${card.abilities.map((x) => `${x.name} (${x.cost} Shén): ${effectText(x.effect)}`).join("; ")}` : ""}`,
      chars,
    );
    return { a, card, lines };
  });
  let y = 22;
  const out: ComponentChildren[] = [];
  for (const { a, card, lines } of rows) {
    out.push(
      <g key={a.uid} class={a.ready ? "avatar-row" : "avatar-row exhausted"}>
        <rect x={8} y={y + 3} width={10} height={10} rx={2} fill={clanColour(a.owner)} />
        <text x={24} y={y + 12} class="small strong-text">
          {card?.name ?? a.card}
        </text>
        <text x={W - 10} y={y + 12} text-anchor="end" class="tiny">
          {seatLabel(header, a.owner)} · {a.location} · {a.ready ? "Ready" : "Exhausted"}
        </text>
        <Lines x={24} y={y + 25} lines={lines} leading={12} class="tiny" />
      </g>,
    );
    y += 18 + lines.length * 12 + 4;
  }
  return (
    <Panel id="avatars" w={W} h={y + 4} label="The Avatars in play">
      <rect class="player-mat" x={1} y={1} width={W - 2} height={y + 2} rx={10} />
      <text x={10} y={16} class="section">Avatars in play</text>
      {out}
    </Panel>
  );
}

const HW = 126;
const HH = 100;

function Hand(props: { view: View; cards: Map<string, Card> }) {
  const { view, cards } = props;
  const perRow = Math.floor((W - 6) / (HW + 4));
  const rows = Math.max(1, Math.ceil(view.hand.length / perRow));
  const h = 24 + rows * (HH + 4) + 4;
  return (
    <Panel id="hand" w={W} h={h} label="Your hand">
      <rect class="own-mat" x={1} y={1} width={W - 2} height={h - 2} rx={10} />
      <text x={10} y={16} class="section">Your hand ({view.hand.length})</text>
      {view.hand.length === 0 && (
        <text x={10} y={40} class="small">
          empty
        </text>
      )}
      {view.hand.map((id, i) => {
        const card = cards.get(id);
        const x = 6 + (i % perRow) * (HW + 4);
        const y = 22 + Math.floor(i / perRow) * (HH + 4);
        const text = card ? cardText(card).flatMap((t) => wrap(t, fits(HW - 10, 10))).slice(0, 5) : [];
        return (
          <Target key={`${id}-${i}`} place={`hand:${id}`} name={card?.name ?? id} x={x} y={y} w={HW} h={HH}>
            <title>{card ? `${card.name} (${card.realm}, power cost ${card.cost}): ${cardText(card).join("; ")}` : id}</title>
            <rect class={`scard realm-${card?.realm ?? ""}`} x={x} y={y} width={HW} height={HH} rx={6} />
            <text x={x + 6} y={y + 14} class="scard-name">{cut(card?.name ?? id, 18)}</text>
            <g class="cost">
              <circle cx={x + HW - 12} cy={y + 11} r={8} />
              <text x={x + HW - 12} y={y + 11} dy="0.35em" text-anchor="middle">{card?.cost ?? "?"}</text>
            </g>
            <text x={x + 6} y={y + 26} class="scard-realm">{card?.realm}</text>
            <Lines x={x + 6} y={y + 40} lines={text} leading={11} class="scard-text" />
          </Target>
        );
      })}
    </Panel>
  );
}

export const shen: BoardModule<View, Move> = { view: ViewSchema, Board: ShenBoard };
