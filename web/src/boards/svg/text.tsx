// Text in SVG, which does not wrap by itself: lines cut at word boundaries by a width in
// characters (the boards' fonts are close enough to 0.55 em a character), drawn as tspans.

/** `text` in lines of at most `chars` characters (a longer word is cut). */
export function wrap(text: string, chars: number, maxLines = Infinity): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (!line) line = word;
    else if (line.length + 1 + word.length <= chars) line += " " + word;
    else {
      lines.push(line);
      line = word;
    }
    while (line.length > chars) {
      lines.push(line.slice(0, chars - 1) + "-");
      line = line.slice(chars - 1);
    }
  }
  if (line) lines.push(line);
  if (lines.length > maxLines) {
    const kept = lines.slice(0, maxLines);
    kept[maxLines - 1] = kept[maxLines - 1]!.replace(/.?$/, "…");
    return kept;
  }
  return lines;
}

/** Characters of a font `size` that fit in `width` units. */
export function fits(width: number, size: number): number {
  return Math.max(1, Math.floor(width / (size * 0.55)));
}

/** Lines of text from (x, y), the first baseline at y, `leading` units apart. */
export function Lines(props: { x: number; y: number; lines: string[]; leading: number; class?: string; anchor?: "start" | "middle" | "end" }) {
  return (
    <text x={props.x} y={props.y} class={props.class} text-anchor={props.anchor}>
      {props.lines.map((line, i) => (
        <tspan key={i} x={props.x} dy={i === 0 ? 0 : props.leading}>
          {line}
        </tspan>
      ))}
    </text>
  );
}

/** A name cut to fit `chars` characters. */
export function cut(text: string, chars: number): string {
  return text.length <= chars ? text : text.slice(0, Math.max(1, chars - 1)) + "…";
}
