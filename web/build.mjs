// The web app's build: esbuild bundles src/main.tsx (Preact, the generated client) and
// its CSS into dist/ with content-hashed names, then writes index.html pointing at them
// and a config.json with the gateway's default port (the static server of `make run`
// answers its own instead). `node build.mjs` (npm run build); `--watch` rebuilds on change.
import * as esbuild from "esbuild";
import { readFileSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename } from "node:path";
import { gzipSync } from "node:zlib";

const OUT = "dist";
const watch = process.argv.includes("--watch");

const options = {
  entryPoints: { app: "src/main.tsx" },
  bundle: true,
  format: "esm",
  target: ["chrome100", "firefox100", "safari15"],
  minify: !watch,
  sourcemap: "linked",
  jsx: "automatic",
  jsxImportSource: "preact",
  entryNames: "[name]-[hash]",
  outdir: OUT,
  metafile: true,
  legalComments: "linked",
  logLevel: "warning",
  plugins: [
    {
      name: "index.html",
      setup(build) {
        build.onEnd(async (result) => {
          if (result.errors.length) return;
          const outputs = Object.keys(result.metafile.outputs);
          const js = outputs.find((f) => f.endsWith(".js"));
          const css = outputs.find((f) => f.endsWith(".css"));
          const template = await readFile("index.html", "utf8");
          const html = template.replace("%APP_JS%", basename(js)).replace("%APP_CSS%", basename(css));
          await writeFile(`${OUT}/index.html`, html);
          await writeFile(`${OUT}/config.json`, JSON.stringify({ gatewayPort: 50051 }) + "\n");
          const sizes = [js, css].map((f) => [basename(f), gzipSync(readFileSync(f)).length]);
          console.log(`web: ${sizes.map(([f, n]) => `${f} ${(n / 1024).toFixed(1)} KB gzipped`).join(", ")}`);
        });
      },
    },
  ],
};

await rm(OUT, { recursive: true, force: true });
await mkdir(OUT, { recursive: true });
if (watch) {
  const context = await esbuild.context(options);
  await context.watch();
} else {
  await esbuild.build(options);
}
