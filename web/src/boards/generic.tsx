// The generic board: any game's view drawn by reflection over its message descriptor, as
// readable HTML (facts, tables, one card per player), in the protos' own names. Every
// game is playable with it and the move list; a game's own board replaces it.
import type { DescEnum, DescField, DescMessage, Message } from "@bufbuild/protobuf";
import type { ComponentChildren } from "preact";
import type { GameHeader } from "../gen/tabletop/common/v1/game_pb";

// Int fields whose value is a seat: shown by the seat's name.
const SEAT_FIELDS = new Set([
  "seat", "current", "first_player", "end_triggered_by", "blocked_by", "druid", "bottom_seat",
  "owner", "leader", "winner", "active", "chooser", "attacker", "defender", "holder", "viewer",
]);
// Lists of ints whose values are seats.
const SEAT_LISTS = new Set(["winners", "to_act", "seats", "passed", "losers", "eliminated"]);
const MAX_DEPTH = 5;

/** The view drawn from its descriptor. It takes no moves: the page lists them all. */
export function GenericBoard(props: { schema: DescMessage; view: Message; header: GameHeader }) {
  const { schema, view, header } = props;
  return (
    <div class="generic-board" data-view={schema.typeName}>
      <MessageBody desc={schema} value={view as unknown as Record<string, unknown>} header={header} depth={0} />
    </div>
  );
}

/** "row_glyphs" -> "Row glyphs". */
export function fieldLabel(name: string): string {
  const words = name.replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** COLOUR_RED -> "red"; the unspecified value -> "". */
export function enumText(desc: DescEnum, value: number): string {
  const v = desc.value[value];
  if (!v) return String(value);
  const prefix = (desc.sharedPrefix ?? "").toUpperCase();
  const bare = prefix && v.name.startsWith(prefix) ? v.name.slice(prefix.length) : v.name;
  return bare === "UNSPECIFIED" ? "" : bare.toLowerCase().replace(/_/g, " ");
}

export function seatName(header: GameHeader, seat: number): string {
  const s = header.seats[seat];
  if (!s) return `seat ${seat}`;
  return s.playerName ? `${s.name} (${s.playerName})` : s.name;
}

type Fields = Record<string, unknown>;

interface Shown {
  field: DescField;
  value: unknown;
}

/** The fields of a message worth showing: set ones, and every number. */
function shown(desc: DescMessage, value: Fields): Shown[] {
  const out: Shown[] = [];
  for (const member of desc.members) {
    if (member.kind === "oneof") {
      const chosen = value[member.localName] as { case?: string; value?: unknown } | undefined;
      const field = member.fields.find((f) => f.localName === chosen?.case);
      if (field) out.push({ field, value: chosen!.value });
      continue;
    }
    const v = value[member.localName];
    if (v === undefined || v === null || v === "" || v === false) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (member.fieldKind === "enum" && v === 0) continue;
    out.push({ field: member, value: v });
  }
  return out;
}

function isScalarLike(field: DescField): boolean {
  if (field.fieldKind === "scalar" || field.fieldKind === "enum") return true;
  return field.fieldKind === "list" && field.listKind !== "message";
}

function scalarOnly(desc: DescMessage): boolean {
  return desc.fields.every((f) => isScalarLike(f) && !f.oneof);
}

/** A message drawn as a table row: scalars, and messages of scalars as more columns. */
function isFlat(desc: DescMessage): boolean {
  return desc.fields.every((f) => !f.oneof && (isScalarLike(f) || (f.fieldKind === "message" && scalarOnly(f.message))));
}

function scalarText(field: DescField, value: unknown, header: GameHeader): string {
  if (field.fieldKind === "enum") return enumText(field.enum, value as number);
  if (field.fieldKind === "list" && field.listKind === "enum") {
    return (value as number[]).map((v) => enumText(field.enum, v)).join(", ");
  }
  if (field.fieldKind === "list" && SEAT_LISTS.has(field.name)) {
    return (value as number[]).map((seat) => seatName(header, seat)).join(", ");
  }
  if (field.fieldKind === "list") return (value as unknown[]).map(String).join(", ");
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "number" && SEAT_FIELDS.has(field.name)) return seatName(header, value);
  return String(value);
}

function MessageBody(props: { desc: DescMessage; value: Fields; header: GameHeader; depth: number }) {
  const { desc, value, header, depth } = props;
  const fields = shown(desc, value);
  const facts = fields.filter((s) => isScalarLike(s.field));
  const nested = fields.filter((s) => !isScalarLike(s.field));
  return (
    <>
      {facts.length > 0 && (
        <dl class="facts">
          {facts.map((s) => (
            <div class="fact" key={s.field.name}>
              <dt>{fieldLabel(s.field.name)}</dt>
              <dd>{scalarText(s.field, s.value, header)}</dd>
            </div>
          ))}
        </dl>
      )}
      {depth < MAX_DEPTH && nested.map((s) => <Nested key={s.field.name} {...s} header={header} depth={depth} />)}
    </>
  );
}

function Nested(props: Shown & { header: GameHeader; depth: number }) {
  const { field, value, header, depth } = props;
  const Heading = (h: { children: ComponentChildren }) => (depth === 0 ? <h3>{h.children}</h3> : <h4>{h.children}</h4>);
  if (field.fieldKind === "message") {
    return (
      <section class="part">
        <Heading>{fieldLabel(field.name)}</Heading>
        <MessageBody desc={field.message} value={value as Fields} header={header} depth={depth + 1} />
      </section>
    );
  }
  if (field.fieldKind === "list" && field.listKind === "message") {
    const rows = value as Fields[];
    const players = field.name === "players" && rows.length === header.seats.length;
    return (
      <section class="part">
        <Heading>{fieldLabel(field.name)} <span class="count">({rows.length})</span></Heading>
        {isFlat(field.message) ? (
          <Table desc={field.message} rows={rows} header={header} />
        ) : (
          <div class="cards">
            {rows.map((row, i) => (
              <Card key={i} title={players ? seatName(header, i) : undefined} mine={players && header.viewer === i}>
                <MessageBody desc={field.message} value={row} header={header} depth={depth + 1} />
              </Card>
            ))}
          </div>
        )}
      </section>
    );
  }
  if (field.fieldKind === "map") {
    const entries = Object.entries(value as Fields);
    return (
      <section class="part">
        <Heading>{fieldLabel(field.name)}</Heading>
        <dl class="facts">
          {entries.map(([k, v]) => (
            <div class="fact" key={k}>
              <dt>{k}</dt>
              <dd>{typeof v === "object" ? JSON.stringify(v) : String(v)}</dd>
            </div>
          ))}
        </dl>
      </section>
    );
  }
  return null;
}

function Card(props: { title?: string; mine?: boolean; children: ComponentChildren }) {
  return (
    <div class={props.mine ? "card mine" : "card"}>
      {props.title && (
        <div class="card-title">
          {props.title}
          {props.mine && <span class="you"> · you</span>}
        </div>
      )}
      {props.children}
    </div>
  );
}

interface Column {
  key: string;
  label: string;
  field: DescField;
  get: (row: Fields) => unknown;
}

function columnsOf(desc: DescMessage): Column[] {
  return desc.fields.flatMap((f): Column[] => {
    if (f.fieldKind !== "message") return [{ key: f.name, label: fieldLabel(f.name), field: f, get: (r) => r[f.localName] }];
    return f.message.fields.map((sub) => ({
      key: `${f.name}.${sub.name}`,
      label: fieldLabel(`${f.name} ${sub.name}`),
      field: sub,
      get: (r) => (r[f.localName] as Fields | undefined)?.[sub.localName],
    }));
  });
}

function blank(field: DescField, v: unknown): boolean {
  return v === undefined || v === null || v === "" || v === false || (Array.isArray(v) && v.length === 0) || (field.fieldKind === "enum" && v === 0);
}

function Table(props: { desc: DescMessage; rows: Fields[]; header: GameHeader }) {
  const { desc, rows, header } = props;
  // Columns set in at least one row.
  const columns = columnsOf(desc).filter((c) => rows.some((r) => !blank(c.field, c.get(r))));
  if (columns.length === 0) return <p class="muted">{rows.length} empty</p>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.key} scope="col">
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              {columns.map((c) => {
                const v = c.get(row);
                return <td key={c.key}>{v === undefined || (Array.isArray(v) && v.length === 0) ? "" : scalarText(c.field, v, header)}</td>;
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
