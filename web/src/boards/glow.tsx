// Glow's board: the meeting track (each space's element, the companion in front of it,
// the small dice and footprint tokens on it), the deck, the reserve pool's dice, the
// spell pile, the reroll tokens and the cemetery; each player's company (adventurer and
// companions, with the spell riding on the last), dice with their faces (cursed, used,
// picked), score track position, reroll, footprint and firefly tokens, spells; and the
// journey board in play, The Province of Shadows or The Archipelago of Darkness
// (glow-journey.tsx).
//
// Targets: a meeting-track space (take, bury, move the black die there), a die (pick, the
// black die staying, a Sketal's die colour in the reserve pool), a card of the viewer's
// company (resolve, lose, a Lumipili's reroll), the viewer's reroll tokens and score
// token (rerolls and fixes paid with them), a spell token (resolve, cancel), a companion
// in the cemetery (raise), a spot (go, camp) or an island (sail).
import type { ComponentChildren } from "preact";
import { useCallback } from "preact/hooks";
import { GameStatus, type GameHeader } from "../gen/tabletop/common/v1/game_pb";
import { Board, Colour, RerollSource, Stage, Step, ViewSchema, type Die, type Move, type Player, type Spell, type View } from "../gen/tabletop/glow/v1/glow_pb";
import { seatLabel } from "../format";
import { AdventurerCard, CARD_H, CARD_W, W, CompanionCard, ConditionView, DieView, EffectView, FaceIcon, conditionText, effectWords, playerColour } from "./glow-pieces";
import { Journey } from "./glow-journey";
import { BoardFrame, Panel } from "./svg/frame";
import { Icon } from "./svg/icons";
import { Lines, wrap } from "./svg/text";
import { Target, useTargets } from "./svg/targets";
import type { BoardModule, BoardProps } from "./types";

const STEPS: Record<number, string> = {
  [Step.ADVENTURERS]: "Game Setup: choosing adventurers",
  [Step.MORNING]: "Morning: recruit a companion",
  [Step.LATE_MORNING]: "Late Morning: roll and reroll dice (all at once)",
  [Step.NOON]: "Noon: resolve the cards (all at once)",
  [Step.AFTERNOON]: "Afternoon: continue the journey (all at once)",
  [Step.OVER]: "The game is over",
};
const STAGES: Record<number, string> = {
  [Stage.CHOOSE_ADVENTURER]: "choose an adventurer",
  [Stage.RECRUIT]: "recruit a companion",
  [Stage.MOVE_BLACK_DIE]: "move the black die?",
  [Stage.SKETAL_DIE]: "the Sketal's die colour",
  [Stage.CEMETERY_PICK]: "send a companion to the cemetery",
  [Stage.REROLLS]: "reroll, fix or be ready",
  [Stage.REROLL_PICK]: "pick the dice to reroll",
  [Stage.FIX_PAY]: "pay the three rerolls",
  [Stage.FIX_PICK]: "pick the die to set",
  [Stage.FIX_FACE]: "choose the face",
  [Stage.RESOLVING]: "resolve the triggered cards",
  [Stage.RESURRECT]: "take one back from the cemetery",
  [Stage.JOURNEY]: "journey",
  [Stage.SKULL]: "skull: lose a companion or cancel a spell",
};


// ---- where each move is made -----------------------------------------------------------

function placeOf(view: View, viewer: number | undefined) {
  const me = view.players.find((p) => p.seat === viewer);
  const black = view.meetingTrack.flatMap((s) => s.dice).find((d) => d.colour === Colour.BLACK);
  return (move: Move): string | undefined => {
    const k = move.kind;
    switch (k.case) {
      case "take":
      case "bury":
        return `space:${k.value.space}`;
      case "black":
        if (k.value.target.case === "space") return `space:${k.value.target.value}`;
        return black ? `die:${black.id}` : undefined;
      case "die":
        return `pooldie:${k.value.colour}`;
      case "reroll":
      case "pay":
        if (k.value.source === RerollSource.TOKEN) return `tokens:${viewer}`;
        if (k.value.source === RerollSource.SCORE_TRACK) return `score:${viewer}`;
        return `card:${viewer}:${k.value.companion}`;
      case "pick":
        return `die:${k.value.die}`;
      case "resolve":
        if (k.value.card.case === "adventurer") return `adventurer:${viewer}`;
        if (k.value.card.case === "companion") return `card:${viewer}:${k.value.card.value}`;
        if (k.value.card.case === "spell") return `spell:${viewer}:${k.value.card.value}`;
        return undefined;
      case "raiseCompanion":
        return k.value.choice.case === "companion" ? `cemetery:${k.value.choice.value}` : undefined;
      case "lose":
        return `card:${viewer}:${k.value.companion}`;
      case "cancel":
        return k.value.spell.case === "revealed" ? `spell:${viewer}:${k.value.spell.value}` : `hidden-spells:${viewer}`;
      case "go":
        return `spot:${k.value.spot}`;
      case "camp":
        return me ? `spot:${me.company}` : undefined;
      case "sail":
        return `island:${k.value.toIsland}`;
      default:
        return undefined; // adventurer, fix, roll, face, ready, raise none, end
    }
  };
}

function GlowBoard(props: BoardProps<View, Move>) {
  const { view, header } = props;
  const viewer = header.viewer;
  const targets = useTargets(props, useCallback(placeOf(view, viewer), [view, viewer]));
  const over = view.step === Step.OVER || header.status === GameStatus.FINISHED;
  const acting = over ? [] : header.toAct;
  const status = (
    <>
      <strong>{view.day ? `Day ${view.day} of 8` : "Setup"}</strong> · {STEPS[view.step] ?? ""}
      {acting.length > 0 && (
        <>
          {" · "}
          {acting.map((s, i) => {
            const p = view.players.find((x) => x.seat === s);
            const what = p ? STAGES[p.stage] : "";
            return (
              <span key={s}>
                {i > 0 && "; "}
                <strong>{s === viewer ? "You" : seatLabel(header, s)}</strong>
                {what && ` to ${what}`}
              </span>
            );
          })}
        </>
      )}
    </>
  );
  const facts = (
    <>
      {view.board === Board.ARCHIPELAGO ? "The Archipelago of Darkness" : "The Province of Shadows"}
      {view.firstPlayer !== undefined && <> · first player: {seatLabel(header, view.firstPlayer)}</>}
    </>
  );
  const players = [...view.players].sort((a, b) => (a.seat === viewer ? -1 : b.seat === viewer ? 1 : a.seat - b.seat));
  return (
    <BoardFrame game="glow" header={header} targets={targets} status={status} facts={facts}>
      <MeetingTrack view={view} />
      {players.map((p) => (
        <PlayerPanel key={p.seat} view={view} header={header} player={p} acting={acting.includes(p.seat)} />
      ))}
      <Journey view={view} header={header} />
    </BoardFrame>
  );
}

export function Rainbow() {
  return (
    <defs>
      <linearGradient id="glow-rainbow" x1="0" x2="1" y1="0" y2="1">
        <stop offset="0" stop-color="#d23c2f" />
        <stop offset="0.33" stop-color="#f2c72c" />
        <stop offset="0.66" stop-color="#3d9b47" />
        <stop offset="1" stop-color="#2c5fb3" />
      </linearGradient>
    </defs>
  );
}

const SPACE_W = 76;

function MeetingTrack(props: { view: View }) {
  const { view } = props;
  const out: ComponentChildren[] = [];
  const top = 22;
  const anyCard = view.meetingTrack.some((s) => s.companion);
  const cardH = anyCard ? CARD_H : 16;
  const trackH = Math.max(...view.meetingTrack.map((s) => 34 + Math.max(1, Math.ceil(s.dice.length / 3)) * 23 + cardH + 4), 60) + top;
  for (const s of view.meetingTrack) {
    const x = 6 + s.space * (SPACE_W + 1.5);
    const face = s.element;
    const diceRows = Math.max(1, Math.ceil(s.dice.length / 3));
    const cardY = top + 34 + diceRows * 23;
    const name = s.companion ? `space ${s.space}: ${s.companion.name}` : `space ${s.space}`;
    out.push(
      <Target key={`s${s.space}`} place={`space:${s.space}`} name={name} x={x} y={top} w={SPACE_W - 2} h={trackH - top}>
        <rect class="space" x={x} y={top} width={SPACE_W - 2} height={trackH - top} rx={8} />
        <circle class="space-element" cx={x + 16} cy={top + 16} r={12} />
        <FaceIcon face={face} x={x + 16} y={top + 16} size={16} class="element-icon" />
        <text x={x + 32} y={top + 20} class="tiny">{s.space}</text>
        {s.footprints > 0 && (
          <g class="foot-token">
            <title>{`${s.footprints} footprint token${s.footprints === 1 ? "" : "s"} with this companion`}</title>
            <circle cx={x + SPACE_W - 16} cy={top + 16} r={11} />
            <Icon name="footprint" x={x + SPACE_W - 16} y={top + 16} size={13} />
            {s.footprints > 1 && <text x={x + SPACE_W - 4} y={top + 28} text-anchor="end" class="tiny">{s.footprints}</text>}
          </g>
        )}
        {s.dice.map((d, i) => (
          <DieTarget key={d.id} die={d} x={x + 5 + (i % 3) * 23} y={top + 34 + Math.floor(i / 3) * 23} />
        ))}
        {s.companion ? (
          <CompanionCard card={s.companion} x={x + 1} y={cardY} />
        ) : (
          <text x={x + SPACE_W / 2} y={cardY + 12} text-anchor="middle" class="tiny muted-text">
            no companion
          </text>
        )}
      </Target>,
    );
  }
  let y = trackH + 8;
  // The supplies.
  out.push(
    <g key="supplies" class="supplies">
      <g>
        <title>{`the deck: ${view.deckCount} companions face down; ${view.boxCount} returned to the box unseen`}</title>
        <rect class="card-back" x={9} y={y + 3} width={40} height={52} rx={5} />
        <rect class="card-back" x={6} y={y} width={40} height={52} rx={5} />
        <text x={26} y={y + 24} text-anchor="middle" class="deck-label">deck</text>
        <text x={26} y={y + 42} text-anchor="middle" class="deck-count">{view.deckCount}</text>
      </g>
      <g>
        <title>{`the spell pile: ${view.spellPileCount} face down; ${view.spellsBoxedCount} back in the box`}</title>
        <circle cx={78} cy={y + 22} r={18} class="spell-token back" />
        <text x={78} y={y + 27} text-anchor="middle" class="deck-count small-count">{view.spellPileCount}</text>
        <text x={78} y={y + 54} text-anchor="middle" class="tiny">spells</text>
      </g>
      <g>
        <title>{`${view.rerollPool} reroll tokens in the reserve pool`}</title>
        <Icon name="reroll" x={124} y={y + 18} size={22} class="reroll-icon" />
        <text x={124} y={y + 44} text-anchor="middle" class="small">{view.rerollPool}</text>
        <text x={124} y={y + 56} text-anchor="middle" class="tiny">rerolls</text>
      </g>
      <text x={156} y={y + 8} class="tiny">reserve pool</text>
      {view.pool.map((d, i) => {
        const x = 156 + (i % 7) * 33;
        const dy = y + 14 + Math.floor(i / 7) * 30;
        // A Sketal takes a die by its colour: the first of each colour is the target.
        const first = view.pool.findIndex((o) => o.colour === d.colour) === i;
        return first ? <PoolDie key={d.id} die={d} x={x} y={dy} /> : <DieView key={d.id} die={d} x={x} y={dy} />;
      })}
      {view.pool.length === 0 && <text x={156} y={y + 30} class="tiny muted-text">empty</text>}
    </g>,
  );
  y += Math.max(62, 20 + Math.ceil(view.pool.length / 7) * 30);
  out.push(
    <text key="cem" x={8} y={y + 10} class="small">
      Cemetery ({view.cemetery.length}){view.diceBox.length > 0 ? ` · ${view.diceBox.length} dice out of the game` : ""}
    </text>,
  );
  y += 16;
  let cx = 8;
  for (const c of view.cemetery) {
    const label = `${c.name} #${c.id}`;
    const w = label.length * 5.8 + 12;
    if (cx + w > W - 6) {
      cx = 8;
      y += 22;
    }
    out.push(
      <Target key={`c${c.id}`} place={`cemetery:${c.id}`} name={label} x={cx} y={y} w={w} h={18} shape={{ kind: "rect", rx: 9 }}>
        <title>{`${label}: ${conditionText(c.condition)} → ${effectWords(c.effect).join(", ")}`}</title>
        <rect class="name-chip" x={cx} y={y} width={w} height={18} rx={9} />
        <text x={cx + w / 2} y={y + 13} text-anchor="middle" class="tiny chip-text">{label}</text>
      </Target>,
    );
    cx += w + 5;
  }
  y += 26;
  return (
    <Panel id="meeting" w={W} h={y} label="The meeting track, the deck, the reserve pool and the cemetery">
      <Rainbow />
      <rect class="table" x={0} y={0} width={W} height={y} rx={10} />
      <text x={8} y={15} class="section">Meeting track</text>
      {out}
    </Panel>
  );
}

function DieTarget(props: { die: Die; x: number; y: number; mark?: "cancelled" | "used" | "picked" }) {
  const { die, x, y } = props;
  const size = die.large ? 26 : 20;
  return (
    <Target place={`die:${die.id}`} name={`the ${die.large ? "large" : "small"} die ${die.id}`} x={x} y={y} w={size} h={size}>
      <DieView die={die} x={x} y={y} mark={props.mark} />
    </Target>
  );
}

function PoolDie(props: { die: Die; x: number; y: number }) {
  const { die, x, y } = props;
  const size = die.large ? 26 : 20;
  return (
    <Target place={`pooldie:${die.colour}`} name={`a ${die.large ? "large" : "small"} die from the reserve pool`} x={x} y={y} w={size} h={size}>
      <DieView die={die} x={x} y={y} />
    </Target>
  );
}

function PlayerPanel(props: { view: View; header: GameHeader; player: Player; acting: boolean }) {
  const { view, header, player, acting } = props;
  const seat = player.seat;
  const you = header.viewer === seat;
  const colour = playerColour(player.adventurer?.colour, seat);
  const stage = player.stage !== Stage.IDLE && player.stage !== Stage.UNSPECIFIED ? STAGES[player.stage] : player.done ? "done for today" : "";
  const out: ComponentChildren[] = [];
  let y = 38;
  // Tokens: score (bursts of light), reroll tokens, footprints, fireflies.
  out.push(
    <Target key="score" place={`score:${seat}`} name="your score token on the score track" x={6} y={y} w={80} h={28}>
      <title>{`score: ${player.score} bursts of light`}</title>
      <rect class="token-box" x={6} y={y} width={80} height={28} rx={14} />
      <Icon name="burst" x={22} y={y + 14} size={20} class="burst-icon" />
      <text x={36} y={y + 19} class="score-n">{player.score}</text>
    </Target>,
    <Target key="tokens" place={`tokens:${seat}`} name="your reroll tokens" x={92} y={y} w={66} h={28}>
      <title>{`${player.rerollTokens} reroll tokens${player.rerollTokensDue ? ` (+${player.rerollTokensDue} due)` : ""}`}</title>
      <rect class="token-box" x={92} y={y} width={66} height={28} rx={14} />
      <Icon name="reroll" x={108} y={y + 14} size={18} class="reroll-icon" />
      <text x={122} y={y + 19} class="token-n">
        {player.rerollTokens}
        {player.rerollTokensDue ? `+${player.rerollTokensDue}` : ""}
      </text>
    </Target>,
    <g key="foot">
      <title>{`${player.footprints} footprints`}</title>
      <rect class="token-box" x={164} y={y} width={54} height={28} rx={14} />
      <Icon name="footprint" x={180} y={y + 14} size={17} class="foot-icon" />
      <text x={194} y={y + 19} class="token-n">{player.footprints}</text>
    </g>,
    <g key="ff">
      <title>{`${player.fireflies} fireflies (tokens)`}</title>
      <rect class="token-box" x={224} y={y} width={54} height={28} rx={14} />
      <Icon name="firefly" x={240} y={y + 14} size={17} class="firefly-icon" />
      <text x={254} y={y + 19} class="token-n">{player.fireflies}</text>
    </g>,
  );
  if (stage) {
    out.push(
      <Lines key="stage" x={W - 8} y={y + 11} lines={wrap((acting ? "◀ " : "") + stage, 20, 2)} leading={12} anchor="end" class={acting ? "stage acting-stage" : "stage"} />,
    );
  }
  y += 36;
  // Dice.
  const cancelled = new Set(player.cancelled);
  const used = new Set(player.used);
  const picked = new Set(player.picked);
  if (player.dice.length) {
    out.push(<text key="dice-t" x={8} y={y + 10} class="tiny">dice{view.step === Step.LATE_MORNING && player.paid ? ` · ${player.paid}/3 rerolls paid for a fix` : ""}</text>);
    let dx = 8;
    player.dice.forEach((d) => {
      const mark = cancelled.has(d.id) ? "cancelled" : picked.has(d.id) ? "picked" : used.has(d.id) ? "used" : undefined;
      const size = d.large ? 26 : 20;
      out.push(<DieTarget key={`d${d.id}`} die={d} x={dx} y={y + 14 + (26 - size)} mark={mark} />);
      dx += size + 5;
    });
    y += 46;
  }
  // The company: adventurer, then companions in recruiting order (spells on the last).
  const spellsOn = player.spells.length + player.faceDownSpellCount > 0;
  const cards: ComponentChildren[] = [];
  const perRow = Math.floor((W - 8) / (CARD_W + 4));
  let i = 0;
  const at = (n: number): [number, number] => [6 + (n % perRow) * (CARD_W + 4), y + Math.floor(n / perRow) * (CARD_H + 6)];
  if (player.adventurer) {
    const [x, cy] = at(i++);
    cards.push(
      <Target key="adv" place={`adventurer:${seat}`} name={`${player.adventurer.name}, your adventurer`} x={x} y={cy} w={CARD_W} h={CARD_H}>
        <AdventurerCard card={player.adventurer} x={x} y={cy} w={CARD_W} resolved={player.adventurerResolved && view.step === Step.NOON} />
      </Target>,
    );
  }
  const resolved = new Set(player.resolvedCompanions);
  const lumUsed = new Set(player.lumipilisUsed);
  player.companions.forEach((c, n) => {
    const [x, cy] = at(i++);
    const state = view.step === Step.NOON && resolved.has(c.id) ? "resolved" : lumUsed.has(c.id) ? "reroll-used" : undefined;
    cards.push(
      <Target key={`c${c.id}`} place={`card:${seat}:${c.id}`} name={`${c.name} #${c.id}`} x={x} y={cy} w={CARD_W} h={CARD_H}>
        <CompanionCard card={c} x={x} y={cy} state={state} spell={spellsOn && n === player.companions.length - 1} />
      </Target>,
    );
  });
  out.push(...cards);
  y += Math.max(1, Math.ceil(i / perRow)) * (CARD_H + 6);
  // Spells: revealed ones, the viewer's own face-down ones, and the others' count.
  const hidden = player.faceDownSpellCount - player.ownFaceDownSpells.length;
  if (player.spells.length || player.ownFaceDownSpells.length || hidden > 0) {
    out.push(<text key="sp-t" x={8} y={y + 12} class="small">Spells:</text>);
    let sx = 60;
    const resolvedSpells = new Set(player.resolvedSpells);
    for (const s of player.spells) {
      out.push(<SpellToken key={`s${s.id}`} spell={s} seat={seat} x={sx} y={y} faceDown={false} resolved={resolvedSpells.has(s.id)} />);
      sx += 104;
    }
    for (const s of player.ownFaceDownSpells) {
      out.push(<SpellToken key={`h${s.id}`} spell={s} seat={seat} x={sx} y={y} faceDown resolved={false} />);
      sx += 104;
    }
    if (hidden > 0) {
      out.push(
        <Target key="hidden" place={`hidden-spells:${seat}`} name="the face-down spell token" x={sx} y={y} w={96} h={24}>
          <title>{`${hidden} face-down spell token${hidden === 1 ? "" : "s"}`}</title>
          <circle cx={sx + 12} cy={y + 12} r={11} class="spell-token back" />
          <text x={sx + 28} y={y + 16} class="tiny">{hidden} face down</text>
        </Target>,
      );
    }
    y += 32;
  }
  const h = y + 4;
  return (
    <Panel id={`player-${seat}`} w={W} h={h} label={`${seatLabel(header, seat)}'s company, dice and tokens`}>
      <Rainbow />
      <rect class={acting ? "player-mat acting-mat" : "player-mat"} x={1} y={1} width={W - 2} height={h - 2} rx={10} />
      <circle cx={18} cy={19} r={8} fill={colour.fill} class="seat-swatch" />
      <text x={32} y={24} class="player-name">
        {seatLabel(header, seat)}
        {you ? " (you)" : ""}
      </text>
      {view.firstPlayer === seat && (
        <g class="first-token">
          <title>the first player token</title>
          <rect x={W - 96} y={8} width={88} height={20} rx={10} />
          <text x={W - 52} y={22} text-anchor="middle">first player</text>
        </g>
      )}
      {out}
    </Panel>
  );
}

function SpellToken(props: { spell: Spell; seat: number; x: number; y: number; faceDown: boolean; resolved: boolean }) {
  const { spell, seat, x, y } = props;
  return (
    <Target place={`spell:${seat}:${spell.id}`} name={`spell ${spell.id}`} x={x} y={y} w={98} h={26}>
      <title>{`spell ${spell.id}${props.faceDown ? " (face down, only you see it)" : ""}: ${conditionText(spell.condition)} → ${effectWords(spell.effect).join(", ")}${props.resolved ? " (resolved)" : ""}`}</title>
      <rect class={props.faceDown ? "spell-face down" : "spell-face"} x={x} y={y} width={98} height={26} rx={13} />
      <ConditionView condition={spell.condition} x={x + 8} y={y + 13} size={11} />
      <EffectView effect={spell.effect} x={x + 44} y={y + 13} size={10} />
    </Target>
  );
}

export const glow: BoardModule<View, Move> = { view: ViewSchema, Board: GlowBoard };
