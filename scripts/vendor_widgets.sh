#!/usr/bin/env bash
# Refresh vendor/: the widget JavaScript that renders saved ipywidgets state without a kernel or a CDN
# (used by the docs and by the static-HTML browser tests). Needs npm and the npm registry; run it by hand
# when ipywidgets moves to a new html-manager release, then update the versions in vendor/README.md.
#   scripts/vendor_widgets.sh [HTML_MANAGER_VERSION] [REQUIREJS_VERSION]
set -euo pipefail
cd "$(dirname "$0")/.."

html_manager=${1:-1.0.15}   # @jupyter-widgets/html-manager 1.x speaks widget protocol 2 (ipywidgets 8)
requirejs=${2:-2.3.8}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "@jupyter-widgets/html-manager@$html_manager" "requirejs@$requirejs" >/dev/null)
mkdir "$work/hm" "$work/rjs"
tar xzf "$work/jupyter-widgets-html-manager-$html_manager.tgz" -C "$work/hm"
tar xzf "$work/requirejs-$requirejs.tgz" -C "$work/rjs"

# The LICENSE files in vendor/ are kept by hand (neither npm package ships one); stop if a license changed.
license() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["license"])' "$1"; }
[ "$(license "$work/hm/package/package.json")" = "BSD-3-Clause" ] || { echo "html-manager license changed" >&2; exit 1; }
[ "$(license "$work/rjs/package/package.json")" = "MIT" ] || { echo "requirejs license changed" >&2; exit 1; }

dist=$work/hm/package/dist
rm -f vendor/html-manager/*.js vendor/html-manager/*.woff2 vendor/requirejs/*.js
mkdir -p vendor/html-manager vendor/requirejs
cp "$dist/embed-amd.js" vendor/html-manager/
cp "$dist/embed.js.LICENSE.txt" vendor/html-manager/THIRD-PARTY-NOTICES.txt
# Font Awesome (the icons of buttons and the Play widget): browsers take the woff2 files, so only those come.
for font in $(grep -o '[0-9a-f]\{20\}\.woff2' vendor/html-manager/embed-amd.js | sort -u); do
    cp "$dist/$font" vendor/html-manager/
done
cp "$work/rjs/package/require.js" vendor/requirejs/
du -sh vendor
