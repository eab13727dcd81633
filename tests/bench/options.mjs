// The benchmarks' shared command line: --quick, --dist DIR, --out FILE and option(name, fallback)
// for each program's own flags (paths relative to the repository root for --dist).
import path from "node:path";
import { fileURLToPath } from "node:url";

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, "../..");
const args = process.argv.slice(2);
export const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
export const QUICK = args.includes("--quick");
export const DIST = path.resolve(ROOT, option("--dist", "dist"));
export const OUT = option("--out", path.join(HERE, "out/results.json"));
