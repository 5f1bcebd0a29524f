#!/usr/bin/env bash
# Render `stagegate graph --stage N` of the worked example to a PNG with mermaid-cli.
#
# Not part of the test suite (it needs a browser). Once per machine:
#   apt-get update && apt-get install -y chromium
#   PUPPETEER_SKIP_DOWNLOAD=1 npm install -g @mermaid-js/mermaid-cli
# Then, from the repository root:  docs/render-graph.sh 4 [OUT.png] [-- graph options]
set -euo pipefail
cd "$(dirname "$0")/.."
stage="${1:-4}"
out="${2:-docs/images/graph-stage-$stage.png}"
shift $(( $# >= 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/puppeteer.json" <<JSON
{"executablePath": "${CHROMIUM:-/usr/bin/chromium}", "args": ["--no-sandbox", "--disable-gpu"]}
JSON
cat > "$work/mermaid.json" <<JSON
{"theme": "default", "layout": "elk", "flowchart": {"curve": "basis", "nodeSpacing": 30, "rankSpacing": 60}}
JSON
"${STAGEGATE:-stagegate}" graph --stage "$stage" "$@" > "$work/graph.mmd"
mmdc --quiet -p "$work/puppeteer.json" -c "$work/mermaid.json" -b white -s 2 \
  -i "$work/graph.mmd" -o "$out"
echo "$out"
