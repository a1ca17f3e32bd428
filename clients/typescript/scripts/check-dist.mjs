// Checks that the committed dist/ is what `tsc -p tsconfig.build.json` makes of src/ now: the
// package is installed from the folder (`npm install --install-links`) or a packed tarball
// without building anything, so dist/ must never lag behind src/. Exits 1 naming each file that
// differs.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = mkdtempSync(path.join(tmpdir(), "toolgate-dist-"));

function files(dir, base = dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? files(full, base) : [path.relative(base, full)];
  });
}

try {
  execFileSync(
    path.join(pkg, "node_modules/.bin/tsc"),
    ["-p", path.join(pkg, "tsconfig.build.json"), "--outDir", out],
    { stdio: "inherit" },
  );
  const made = files(out).sort();
  const committed = files(path.join(pkg, "dist")).sort();
  const differ = [...new Set([...made, ...committed])].filter((file) => {
    const read = (dir) => {
      try {
        return readFileSync(path.join(dir, file), "utf8");
      } catch {
        return null;
      }
    };
    return read(out) !== read(path.join(pkg, "dist"));
  });
  if (differ.length > 0) {
    console.error(`dist/ is not what src/ compiles to (npm run build, then commit dist/): ${differ.join(", ")}`);
    process.exitCode = 1;
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
