#!/usr/bin/env bash
# Regenerate the JSON Schemas of @unotest/protocol 0.5.0 next to this script.
#
#   bash tests/protocol/generate.sh
#
# Input: unotest-protocol-0.5.0.d.ts (the package's index.d.ts, as published).
# Output: one <Type>.schema.json (draft-07) per type of TYPES, made by
# ts-json-schema-generator with --additional-properties (the protocol is additive),
# pinned below and run through npx (needs node and the npm registry, nothing else).
#
# The .d.ts declares its types without `export` and exports them in one trailing
# `export { type A, type B, ... }` list, which the generator does not read as
# exports ("No root type found"). So the generator reads a copy in which every
# name of that list is exported where it is declared and the list is dropped:
# the same types, written as the package's sources write them. (`--expose all`
# is no substitute: it also turns the lib's Record<K, V> into definitions of
# its own, where the published schemas have it inline.)
#
# Pinned to 2.4.0: the last release that runs on node 20 (2.5+ require node 22)
# and whose output equals, byte for byte, the schemas published alongside 0.5.0.
set -euo pipefail

GENERATOR="ts-json-schema-generator@2.4.0"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SOURCE="$HERE/unotest-protocol-0.5.0.d.ts"
TYPES=(
  RunManifest RunArtifact CollectionRunArtifact RuntimeStateFile
  BreakpointsFile DbgCommand ScenarioMeta HelperMeta CollectionMeta RunMeta
  WsMessage LockFile EnvFile
)

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
EXPORTED="$WORK/protocol.d.ts"

node - "$SOURCE" "$EXPORTED" <<'JS'
const fs = require("node:fs");
const [source, target] = process.argv.slice(2);
let text = fs.readFileSync(source, "utf8");
const list = /^export \{([^}]*)\};[ \t]*\n?/m.exec(text);
if (!list) throw new Error(`${source}: no trailing 'export { ... };' list`);
text = text.slice(0, list.index) + text.slice(list.index + list[0].length);
const names = list[1]
  .split(",")
  .map((item) => item.trim())
  .filter((item) => item.startsWith("type "))
  .map((item) => item.slice("type ".length).trim());
for (const name of names) {
  const declaration = new RegExp(`^(interface|type) ${name}\\b`, "gm");
  const found = text.match(declaration) || [];
  if (found.length !== 1) throw new Error(`${name}: ${found.length} declarations, expected 1`);
  text = text.replace(declaration, "export $1 " + name);
}
fs.writeFileSync(target, text);
JS

for type in "${TYPES[@]}"; do
  npx --yes "$GENERATOR" \
    --path "$EXPORTED" \
    --type "$type" \
    --additional-properties \
    --out "$WORK/$type.schema.json"
  mv "$WORK/$type.schema.json" "$HERE/$type.schema.json"
  echo "wrote $HERE/$type.schema.json"
done
