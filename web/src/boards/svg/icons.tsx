// Small symbols drawn in a 20-unit box centred on (0, 0): Channeling's glyphs and Glow's
// elements share them (air is the wind, water the river, rock the stone, fire the flame,
// nature the tree). A name without a symbol is drawn as its first letters.

const PATHS: Record<string, string> = {
  sun: "M0-4.5A4.5 4.5 0 1 1 0 4.5A4.5 4.5 0 1 1 0-4.5ZM0-9.5V-6.5M0 6.5V9.5M-9.5 0H-6.5M6.5 0H9.5M-6.7-6.7L-4.6-4.6M4.6 4.6L6.7 6.7M-6.7 6.7L-4.6 4.6M4.6-4.6L6.7-6.7",
  moon: "M3.5-7.8A8.5 8.5 0 1 0 7.6 3.8A6.5 6.5 0 0 1 3.5-7.8Z",
  star: "M0-9.5L2.8-3.2L9.5-2.9L4.3 1.4L6 8L0 4.3L-6 8L-4.3 1.4L-9.5-2.9L-2.8-3.2Z",
  tree: "M0-9.5L7.5 3H2V9H-2V3H-7.5Z",
  river: "M0-9.5C4-4 7.2-0.5 7.2 3.2A7.2 7.2 0 0 1-7.2 3.2C-7.2-0.5-4-4 0-9.5Z",
  flame: "M0.5-9.5C6-4.5 7.5-0.5 6.6 3.4A6.6 6.6 0 0 1-6.6 3.4C-7.2 0-5-2.5-3.2-5.3C-2.6-2.4-1.5-1.2 0-0.8C1.5-3.6 1.8-6.2 0.5-9.5Z",
  stone: "M-9.5 7.5L-3.5-5L0.5 0.5L4-3.5L9.5 7.5Z",
  wind: "M-9-3.5H4A3 3 0 1 0 1-6.5M-9 1.5H6.5A3 3 0 1 1 3.5 4.5M-9 6.5H0",
  footprint: "M-4 3.5C-4.5-2.5 4.5-2.5 4 3.5C3.5 9 -3.5 9 -4 3.5ZM-5.7 -4.5a1.7 1.7 0 1 0 3.4 0a1.7 1.7 0 1 0 -3.4 0ZM-3.1 -6.8a1.8 1.8 0 1 0 3.6 0a1.8 1.8 0 1 0 -3.6 0ZM0.10000000000000009 -6.9a1.7 1.7 0 1 0 3.4 0a1.7 1.7 0 1 0 -3.4 0ZM2.8 -4.8a1.5 1.5 0 1 0 3.0 0a1.5 1.5 0 1 0 -3.0 0Z",
  burst: "M0-9.5L2-3.5L8-5.5L4.2-0.5L9.5 3L3.2 3.4L3.5 9.5L0 4.8L-3.5 9.5L-3.2 3.4L-9.5 3L-4.2-0.5L-8-5.5L-2-3.5Z",
  skull: "M0-9A7.5 7 0 0 1 7.5-2C7.5 1.5 5 3 4.5 4V7.5H-4.5V4C-5 3-7.5 1.5-7.5-2A7.5 7 0 0 1 0-9ZM-3.2-3.2A1.8 1.8 0 1 0-3.19-3.2ZM3.2-3.2A1.8 1.8 0 1 0 3.21-3.2Z",
  firefly: "M-2.2 2a2.2 5.5 0 1 0 4.4 0a2.2 5.5 0 1 0 -4.4 0ZM-1-3C-6-9-10-4-2.5 0ZM1-3C6-9 10-4 2.5 0ZM-2.2 7.5a2.2 2.2 0 1 0 4.4 0a2.2 2.2 0 1 0 -4.4 0Z",
  reroll: "M-7.5-2A7.5 7.5 0 0 1 6.5-3.5M6.5-3.5L7.5-8.5M6.5-3.5L1.5-4.5M7.5 2A7.5 7.5 0 0 1-6.5 3.5M-6.5 3.5L-7.5 8.5M-6.5 3.5L-1.5 4.5",
};

// Drawn with a stroke only (lines), not filled.
const STROKED = new Set(["sun", "wind", "reroll"]);

export const ELEMENT_ICON: Record<string, string> = { air: "wind", water: "river", rock: "stone", fire: "flame", nature: "tree" };

export function hasIcon(name: string): boolean {
  return name in PATHS;
}

/** The symbol `name` at (x, y), `size` units across. */
export function Icon(props: { name: string; x: number; y: number; size: number; class?: string }) {
  const { name, x, y, size } = props;
  const path = PATHS[name];
  const cls = ["icon", STROKED.has(name) ? "stroked" : "filled", props.class].filter(Boolean).join(" ");
  if (!path) {
    return (
      <text class={`${cls} icon-text`} x={x} y={y} dy="0.35em" text-anchor="middle" font-size={size * 0.55}>
        {name.slice(0, 3)}
      </text>
    );
  }
  return (
    <g class={cls} transform={`translate(${x} ${y}) scale(${size / 20})`} aria-hidden="true">
      <path d={path} />
    </g>
  );
}
