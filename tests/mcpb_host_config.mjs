// The server command a host derives from a bundle, computed by the MCPB package's own
// getMcpConfigForManifest (the function Claude Desktop uses), so tests substitute
// ${__dirname}, ${user_config.*}, ${HOME}… exactly as the host does.
// Run under `npx -p @anthropic-ai/mcpb@VERSION -c "node mcpb_host_config.mjs DIR USER_CONFIG_JSON"`:
// npx puts the package's `mcpb` executable on PATH, and the package is found from it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const cli = process.env.PATH.split(path.delimiter)
  .map((dir) => path.join(dir, "mcpb"))
  .find((file) => fs.existsSync(file));
if (!cli) throw new Error("the mcpb package is not on PATH (run this under npx -p)");
const root = path.resolve(path.dirname(fs.realpathSync(cli)), "..", "..");
const { getMcpConfigForManifest } = await import(
  pathToFileURL(path.join(root, "dist", "index.js")).href);

const [extensionPath, userConfig] = process.argv.slice(2);
const manifest = JSON.parse(fs.readFileSync(path.join(extensionPath, "manifest.json"), "utf8"));
const home = os.homedir();
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath,
  userConfig: JSON.parse(userConfig),
  pathSeparator: path.sep,
  systemDirs: {
    HOME: home,
    DESKTOP: path.join(home, "Desktop"),
    DOCUMENTS: path.join(home, "Documents"),
    DOWNLOADS: path.join(home, "Downloads"),
  },
});
process.stdout.write(JSON.stringify(config ?? null));
