#!/bin/sh
# report.html as a user opens it: a small study, its report.html copied alone to an empty
# directory (no plots/ beside it), opened in headless Chromium and screenshot. The page must show
# its figures: the screenshot holds the plots' blue lines (matplotlib's first colour), which only
# inline images can bring along, and every inline image decodes. Skipped (77) without chromium
# or matplotlib.
# Usage: report_in_browser.sh COMPAS
set -eu
compas=$1
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "SKIP: no chromium (Debian: apt-get install chromium)"; exit 77; }
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" -c 'import matplotlib, PIL' 2>/dev/null || { echo "SKIP: no python3-matplotlib"; exit 77; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$compas" study --out "$dir/study" --kernels laplace --grid 1x1,1x2 --budget 0.1 --repeats 2 --quiet \
  --stream-size 16MiB
html="$dir/study/report.html"
[ -s "$html" ] || { echo "FAIL: no report.html"; exit 1; }
images=$(grep -c '^!\[' "$dir/study/report.md")
inline=$(grep -o '<img alt="[^"]*" src="data:image/png;base64,' "$html" | wc -l)
[ "$images" -gt 0 ] || { echo "FAIL: report.md shows no plot"; exit 1; }
[ "$inline" -eq "$images" ] || { echo "FAIL: $images plots in report.md, $inline inline in report.html"; exit 1; }

# Every image the page shows decodes as a PNG of some size (a broken one would not load).
"$python" - "$html" <<'PY'
import base64, io, re, sys
from PIL import Image
html = open(sys.argv[1]).read()
srcs = re.findall(r'<img alt="[^"]*" src="data:image/png;base64,([^"]*)"', html)
for i, data in enumerate(srcs):
    im = Image.open(io.BytesIO(base64.b64decode(data)))
    im.verify()
    if im.size[0] < 50 or im.size[1] < 50:
        sys.exit(f"FAIL: image {i} is {im.size[0]}x{im.size[1]}")
print(f"{len(srcs)} inline images decode")
PY
mkdir "$dir/alone"
cp "$html" "$dir/alone/report.html"
# The browser gets a home of its own and a time limit; its chatter on stderr is not ours.
HOME="$dir" timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$dir/profile" --window-size=1200,8000 \
  --screenshot="$dir/shot.png" "file://$dir/alone/report.html" >"$dir/browser.log" 2>&1 || {
  echo "FAIL: the browser did not take the screenshot"; cat "$dir/browser.log"; exit 1; }
"$python" - "$dir/shot.png" <<'PY'
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
blue = sum(1 for r, g, b in im.getdata()
           if abs(r - 31) < 25 and abs(g - 119) < 25 and abs(b - 180) < 25)
dark = sum(1 for r, g, b in im.getdata() if r < 60 and g < 60 and b < 60)
print(f"screenshot {im.size[0]}x{im.size[1]}: {blue} plot-blue pixels, {dark} dark (text) pixels")
if dark < 1000:
    sys.exit("FAIL: the page shows no text")
if blue < 1000:
    sys.exit("FAIL: the page shows no plot")
PY
echo "report.html opened alone in $browser shows its text and its $images plots"
