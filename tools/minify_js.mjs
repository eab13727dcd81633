// Minifies the scripts of the first page load in dist/ in place (terser, an npm devDependency): the
// page's glue, the mirror, the touch helper and Emscripten's loader of each wasm flavour. The sources in
// web/ stay as they are, with their comments; only the copies the site serves shrink (~20 KB gzip of
// the first load's 1 MB). Names the page or the wasm read from outside (window.attentionExplainer,
// Module's keys) are properties or globals, which terser leaves alone; the scripts are classic, not
// modules, so their top level keeps its names too.
//   node tools/minify_js.mjs FILE...
import fs from "node:fs";
import { minify } from "terser";

let failed = false;
for (const file of process.argv.slice(2)) {
  const source = fs.readFileSync(file, "utf8");
  try {
    const out = await minify(source, { compress: true, mangle: true, ecma: 2020 });
    fs.writeFileSync(file, out.code);
  } catch (e) {
    console.error(`minify_js: ${file}: ${e.message}`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
