// Glow's journey boards, drawn from the view's own data (its spots or islands and their
// links; the positions come from the graph, svg/layout.ts): The Province of Shadows with
// each spot's condition, the villages and their bursts, the spaces on the links, the
// companies and encampments; The Archipelago of Darkness with each island's value and
// arrival effect, the passages and how many different elements they need, the boats.
// Targets: a spot to go to (or the village to camp in), an island to sail to.
import type { ComponentChildren } from "preact";
import type { GameHeader } from "../gen/tabletop/common/v1/game_pb";
import { Symbol as Face, type Archipelago, type Effect, type Player, type Province, type Spot, type View } from "../gen/tabletop/glow/v1/glow_pb";
import { seatLabel } from "../format";
import { EffectView, FACES, FaceIcon, W, effectWords, playerColour } from "./glow-pieces";
import { Panel } from "./svg/frame";
import { Icon } from "./svg/icons";
import { layoutGraph } from "./svg/layout";
import { Target } from "./svg/targets";

export function Journey(props: { view: View; header: GameHeader }) {
  const j = props.view.journeyBoard;
  if (j.case === "province") return <ProvinceMap map={j.value} view={props.view} header={props.header} />;
  if (j.case === "archipelago") return <ArchipelagoMap map={j.value} view={props.view} header={props.header} />;
  return null;
}

function hasEffect(e: Effect | undefined): boolean {
  return effectWords(e).length > 0;
}

function colourOf(p: Player) {
  return playerColour(p.adventurer?.colour, p.seat);
}

const PH = 420;

function ProvinceMap(props: { map: Province; view: View; header: GameHeader }) {
  const { map, view, header } = props;
  const ids = map.spots.map((s) => s.id);
  const laid = layoutGraph(ids, map.links.map((l) => [l.a, l.b]), W, PH, 18, 30);
  const pos = (id: number): [number, number] => {
    const [x, y] = laid.at.get(id) ?? [0, 0];
    return [x, y + 20]; // under the title
  };
  const me = view.players.find((p) => p.seat === header.viewer);
  const visited = new Set(me?.visited ?? []);
  const companies = new Map<number, Player[]>();
  const camps = new Map<number, Player[]>();
  for (const p of view.players) {
    companies.set(p.company, [...(companies.get(p.company) ?? []), p]);
    camps.set(p.encampment, [...(camps.get(p.encampment) ?? []), p]);
  }
  const links: ComponentChildren[] = [];
  const marks: ComponentChildren[] = [];
  for (const [i, l] of map.links.entries()) {
    const [x1, y1] = pos(l.a);
    const [x2, y2] = pos(l.b);
    links.push(<line key={`l${i}`} x1={x1} y1={y1} x2={x2} y2={y2} class="trail" />);
    if (l.onWay && hasEffect(l.onWay)) {
      const mx = (x1 + x2) / 2;
      const my = (y1 + y2) / 2;
      marks.push(
        <g key={`w${i}`} class="on-way">
          <title>{`on the way between ${l.a} and ${l.b}: ${effectWords(l.onWay).join(", ")}`}</title>
          <rect x={mx - 15} y={my - 8} width={30} height={16} rx={8} />
          {l.onWay.skull ? <Icon name="skull" x={mx} y={my} size={12} class="skull" /> : <EffectView effect={l.onWay} x={mx - 12} y={my} size={9} />}
        </g>,
      );
    }
  }
  return (
    <Panel id="journey" w={W} h={PH + 24} label="The Province of Shadows">
      <rect class="province-ground" x={0} y={0} width={W} height={PH + 24} rx={10} />
      <text x={10} y={17} class="section map-title">The Province of Shadows</text>
      <g>
        {links}
        {marks}
        {map.spots.map((s) => (
          <SpotNotes key={`n${s.id}`} spot={s} at={pos(s.id)} />
        ))}
        {map.spots.map((s) => (
          <SpotView key={s.id} spot={s} at={pos(s.id)} start={s.id === map.start} visited={visited.has(s.id)} />
        ))}
        {[...camps.entries()].map(([spot, ps]) =>
          ps.map((p, k) => {
            const [x, y] = pos(spot);
            const c = colourOf(p);
            return (
              <g key={`camp${p.seat}`} class="encampment">
                <title>{`${seatLabel(header, p.seat)}'s encampment at ${spot}`}</title>
                <path d={`M${x - 16 + k * 8} ${y + 16}l6 -10l6 10z`} fill={c.fill} />
              </g>
            );
          }),
        )}
        {[...companies.entries()].map(([spot, ps]) =>
          ps.map((p, k) => {
            const [x, y] = pos(spot);
            const c = colourOf(p);
            const px = x + 10 + k * 7;
            const py = y - 12;
            return (
              <g key={`co${p.seat}`} class="company">
                <title>{`${seatLabel(header, p.seat)}'s company at ${spot}`}</title>
                <circle cx={px} cy={py - 5} r={4.5} fill={c.fill} />
                <path d={`M${px - 6} ${py + 6}Q${px} ${py - 6} ${px + 6} ${py + 6}Z`} fill={c.fill} />
              </g>
            );
          }),
        )}
      </g>
    </Panel>
  );
}

function SpotView(props: { spot: Spot; at: [number, number]; start: boolean; visited: boolean }) {
  const { spot, start, visited } = props;
  const [x, y0] = props.at;
  const y = y0;
  const village = spot.village !== undefined;
  const r = village ? 13 : 10;
  const what = village
    ? `village worth ${spot.village} bursts${hasEffect(spot.onEnter) ? `; entering: ${effectWords(spot.onEnter).join(", ")}` : ""}`
    : spot.need
      ? `needs ${FACES[spot.need]}`
      : spot.avoid
        ? `no die may show ${FACES[spot.avoid]}`
        : start
          ? "the start"
          : "free";
  return (
    <Target place={`spot:${spot.id}`} name={`spot ${spot.id}`} x={x - r} y={y - r} w={2 * r} h={2 * r} shape={{ kind: "circle" }}>
      <g>
        <title>{`spot ${spot.id}: ${what}${visited ? " (passed today)" : ""}`}</title>
        {village ? (
          <g class="village">
            <path d={`M${x - 12} ${y0 + 11}V${y0 - 2}L${x} ${y0 - 13}L${x + 12} ${y0 - 2}V${y0 + 11}Z`} />
            <text x={x} y={y0 + 6} text-anchor="middle" class="village-n">{spot.village}</text>
          </g>
        ) : (
          <circle cx={x} cy={y0} r={r} class={start ? "spot start" : visited ? "spot visited" : "spot"} />
        )}
        {spot.need !== Face.UNSPECIFIED && <FaceIcon face={spot.need} x={x} y={y0} size={13} class="spot-icon" />}
        {spot.avoid !== Face.UNSPECIFIED && (
          <g class="crossed">
            <FaceIcon face={spot.avoid} x={x} y={y0} size={13} class="spot-icon" />
            <line x1={x - 8} y1={y0 + 8} x2={x + 8} y2={y0 - 8} class="cross-line" />
          </g>
        )}
        {start && <Icon name="star" x={x} y={y0} size={12} class="start-icon" />}
      </g>
    </Target>
  );
}

/** A spot's number and a village's entering effect, beside it (not part of its target). */
function SpotNotes(props: { spot: Spot; at: [number, number] }) {
  const { spot } = props;
  const [x, y] = props.at;
  const r = spot.village !== undefined ? 13 : 10;
  return (
    <g class="spot-notes">
      <text x={x - r - 1} y={y - r + 2} text-anchor="end" class="spot-id">{spot.id}</text>
      {spot.village !== undefined && hasEffect(spot.onEnter) && <EffectView effect={spot.onEnter} x={x + 14} y={y + 8} size={8} />}
    </g>
  );
}

const AH = 330;

function ArchipelagoMap(props: { map: Archipelago; view: View; header: GameHeader }) {
  const { map, view, header } = props;
  const laid = layoutGraph(map.islands.map((i) => i.id), map.passages.map((p) => [p.a, p.b]), W, AH, 40, 78);
  const pos = (id: number): [number, number] => {
    const [x, y] = laid.at.get(id) ?? [0, 0];
    return [x, y + 16]; // under the title
  };
  const boats = new Map<number, { p: Player; n: number }[]>();
  for (const p of view.players) {
    const count = new Map<number, number>();
    for (const b of p.boats) count.set(b, (count.get(b) ?? 0) + 1);
    for (const [island, n] of count) boats.set(island, [...(boats.get(island) ?? []), { p, n }]);
  }
  return (
    <Panel id="journey" w={W} h={AH + 22} label="The Archipelago of Darkness">
      <rect class="sea" x={0} y={0} width={W} height={AH + 22} rx={10} />
      <text x={10} y={17} class="section map-title sea-title">The Archipelago of Darkness</text>
      <g>
        {map.passages.map((p, i) => {
          const [x1, y1] = pos(p.a);
          const [x2, y2] = pos(p.b);
          const mx = (x1 + x2) / 2;
          const my = (y1 + y2) / 2;
          const need = p.needMin === 0 && p.needMax === 0 ? "free" : p.needMin === p.needMax ? `${p.needMin}` : `${p.needMin}-${p.needMax}`;
          return (
            <g key={i} class="passage">
              <title>{`passage ${p.a}–${p.b}: ${need} different elements${p.footprints ? `, and ${p.footprints} footprint${p.footprints === 1 ? "" : "s"}` : ""}`}</title>
              <line x1={x1} y1={y1} x2={x2} y2={y2} />
              <rect x={mx - 15} y={my - 8} width={30 + (p.footprints ? 16 : 0)} height={16} rx={8} />
              <text x={mx} y={my} dy="0.35em" text-anchor="middle" class="need">{need}</text>
              {p.footprints > 0 && <Icon name="footprint" x={mx + 22} y={my} size={11} class="foot-icon" />}
            </g>
          );
        })}
        {map.islands.map((isl) => {
          const [x, y] = pos(isl.id);
          return (
            <Target key={isl.id} place={`island:${isl.id}`} name={`island ${isl.id}`} x={x - 28} y={y - 20} w={56} h={40} shape={{ kind: "rect", rx: 20 }}>
              <g>
                <title>{`island ${isl.id}${isl.id === map.start ? " (the start)" : ""}: worth ${isl.value} bursts${hasEffect(isl.onArrival) ? `; on arrival: ${effectWords(isl.onArrival).join(", ")}` : ""}`}</title>
                <ellipse cx={x} cy={y} rx={28} ry={20} class={isl.id === map.start ? "island start" : "island"} />
                <text x={x - 24} y={y - 8} class="island-id">{isl.id}</text>
                {isl.value > 0 && (
                  <g class="island-value">
                    <Icon name="burst" x={x + 14} y={y - 7} size={16} />
                    <text x={x + 14} y={y - 7} dy="0.35em" text-anchor="middle" class="end-n">{isl.value}</text>
                  </g>
                )}
                {hasEffect(isl.onArrival) &&
                  (isl.onArrival!.skull ? <Icon name="skull" x={x - 10} y={y + 6} size={13} class="skull" /> : <EffectView effect={isl.onArrival} x={x - 22} y={y + 7} size={9} />)}
              </g>
            </Target>
          );
        })}
        {map.islands.map((isl) => {
          const [x, y] = pos(isl.id);
          return (boats.get(isl.id) ?? []).map(({ p, n }, k) => {
            const c = colourOf(p);
            const bx = x - 22 + k * 22;
            const by = y + 24;
            return (
              <g key={`${isl.id}-${p.seat}`} class="boat">
                <title>{`${n} of ${seatLabel(header, p.seat)}'s boats on island ${isl.id}`}</title>
                <path d={`M${bx} ${by}h18l-4 6h-10z M${bx + 8} ${by}v-9l6 7z`} fill={c.fill} />
                {n > 1 && <text x={bx + 9} y={by + 15} text-anchor="middle" class="boat-n">{n}</text>}
              </g>
            );
          });
        })}
      </g>
    </Panel>
  );
}
