// A game's options form, read from its Options message descriptor (the generated code),
// so every game gets one without a form of its own: a checkbox per bool, a choice per
// enum, a number per integer (empty: unset, the game's default), text for strings and
// one line per item for lists.
import type { DescField, DescMessage } from "@bufbuild/protobuf";
import { ScalarType } from "@bufbuild/protobuf";
import { enumText, fieldLabel } from "./boards/generic";

export type OptionValues = Record<string, string | boolean>;

const INTEGERS = [ScalarType.INT32, ScalarType.UINT32, ScalarType.SINT32, ScalarType.FIXED32, ScalarType.SFIXED32, ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64];
const LONG = [ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64];

function fieldId(field: DescField): string {
  return `option-${field.name}`;
}

export function OptionsForm(props: { desc: DescMessage; values: OptionValues; onChange: (values: OptionValues) => void }) {
  const { desc, values, onChange } = props;
  const set = (name: string, value: string | boolean) => onChange({ ...values, [name]: value });
  if (desc.fields.length === 0) return <p class="muted">This game has no options.</p>;
  return (
    <div class="options">
      {desc.fields.map((field) => {
        const id = fieldId(field);
        const label = fieldLabel(field.name);
        if (field.fieldKind === "scalar" && field.scalar === ScalarType.BOOL) {
          return (
            <label class="check" key={field.name} for={id}>
              <input id={id} name={field.name} type="checkbox" checked={values[field.name] === true} onChange={(e) => set(field.name, e.currentTarget.checked)} />
              {label}
            </label>
          );
        }
        if (field.fieldKind === "enum") {
          return (
            <label key={field.name} for={id}>
              {label}
              <select id={id} name={field.name} value={String(values[field.name] ?? "0")} onChange={(e) => set(field.name, e.currentTarget.value)}>
                {field.enum.values.map((v) => (
                  <option key={v.number} value={String(v.number)}>
                    {enumText(field.enum, v.number) || "the game's default"}
                  </option>
                ))}
              </select>
            </label>
          );
        }
        const numeric = field.fieldKind === "scalar" && INTEGERS.includes(field.scalar);
        if (field.fieldKind === "list") {
          return (
            <label key={field.name} for={id}>
              {label}
              <span class="hint"> (one per line; empty: the game's default)</span>
              <textarea id={id} name={field.name} rows={2} value={String(values[field.name] ?? "")} onInput={(e) => set(field.name, e.currentTarget.value)} />
            </label>
          );
        }
        const value = String(values[field.name] ?? "");
        const onInput = (e: { currentTarget: HTMLInputElement }) => set(field.name, e.currentTarget.value);
        return (
          <label key={field.name} for={id}>
            {label}
            {numeric ? (
              <input id={id} name={field.name} type="number" inputMode="numeric" placeholder="the game's default" value={value} onInput={onInput} />
            ) : (
              <input id={id} name={field.name} type="text" placeholder="the game's default" value={value} onInput={onInput} />
            )}
          </label>
        );
      })}
    </div>
  );
}

/** The form's values as an Options init object; an error names a value it cannot read. */
export function optionsInit(desc: DescMessage, values: OptionValues): Record<string, unknown> {
  const init: Record<string, unknown> = {};
  for (const field of desc.fields) {
    const raw = values[field.name];
    if (raw === undefined || raw === "" || raw === false) continue;
    if (field.fieldKind === "scalar" && field.scalar === ScalarType.BOOL) {
      init[field.localName] = raw === true;
    } else if (field.fieldKind === "enum") {
      const n = Number(raw);
      if (n) init[field.localName] = n;
    } else if (field.fieldKind === "scalar" && INTEGERS.includes(field.scalar)) {
      const text = String(raw).trim();
      if (!/^-?\d+$/.test(text)) throw new Error(`${fieldLabel(field.name)}: “${text}” is not a whole number`);
      init[field.localName] = LONG.includes(field.scalar) ? BigInt(text) : Number(text);
    } else if (field.fieldKind === "scalar") {
      init[field.localName] = String(raw);
    } else if (field.fieldKind === "list" && field.listKind === "scalar") {
      const items = String(raw).split("\n").map((s) => s.trim()).filter(Boolean);
      init[field.localName] = INTEGERS.includes(field.scalar) ? items.map(Number) : items;
    }
  }
  return init;
}
