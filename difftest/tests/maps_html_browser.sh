#!/bin/sh
# SPDX-License-Identifier: MIT
# maps.html in a real browser: difftest replays a known divergence (the
# test-only target faulty:lost-unwritten reports unwritten extents as data),
# headless Chromium loads the page it wrote, and this script checks what the
# page's script built (the DOM after it ran: --dump-dom) and what it drew
# (the pixels of a --screenshot, decoded by python3's zlib: the state colours
# in the rows where the runs lie, the legend's swatches, the red marker over
# the differing blocks).  The page reports where it drew its rows and
# swatches in #selfcheck, so no coordinate is guessed here.
# Usage: maps_html_browser.sh DIFFTEST_BIN.  Exit 77 (ctest: skipped) when
# chromium is not installed.
set -eu
bin=$1
if ! command -v chromium >/dev/null 2>&1; then
	echo "SKIP: chromium not installed (scripts/deps.sh installs it)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# blocks 0-15 data, 16-31 hole, 32-95 unwritten (the target: data), then
# more ops after the divergence that the replay cuts off
cat > div.log <<'EOF'
# target: faulty:lost-unwritten:ext4
# files: 1
f0 pwrite -S 0x41 0 65536
f0 falloc -k 131072 262144
f0 pwrite -S 0x42 1048576 8192
EOF
rc=0
"$bin" --replay div.log --out out >replay.txt || rc=$?
[ "$rc" = 1 ] || { echo "FAIL: replay exited $rc, expected 1 (a divergence)"; cat replay.txt; exit 1; }
page=$tmp/out/replay/maps.html
[ -s "$page" ] || { echo "FAIL: no maps.html beside maps.txt"; exit 1; }

browse() {	# browse URL ARGS...: chromium, bounded in time, its own profile
	url=$1
	shift
	# --virtual-time-budget: the page's script has run when the DOM or
	# screenshot is taken (no sleep); --no-sandbox: root in CI
	timeout 120 chromium --headless=new --no-sandbox --disable-gpu \
		--user-data-dir="$tmp/profile" --force-device-scale-factor=1 \
		--window-size=1200,900 --virtual-time-budget=5000 "$@" "$url" 2>>chromium.err
}
browse "file://$page" --dump-dom >dom.html
browse "file://$page" --screenshot="$tmp/last.png" >/dev/null
browse "file://$page#op=0" --screenshot="$tmp/op0.png" >/dev/null
[ -s last.png ] && [ -s op0.png ] || { echo "FAIL: no screenshot"; cat chromium.err; exit 1; }

python3 - dom.html last.png op0.png <<'EOF'
import json, re, struct, sys, zlib

dom = open(sys.argv[1]).read()
m = re.search(r'<pre id="selfcheck">(.*?)</pre>', dom, re.S)
assert m, "the page's script did not run (no #selfcheck in the DOM)"
sc = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
fails = []
def check(cond, what):
    if not cond:
        fails.append(what)
# what the page built: runs, ops on the timeline, differing ranges
check(sc["exp_runs"] == 3 and sc["act_runs"] == 3, "runs: %s/%s, expected 3/3" % (sc["exp_runs"], sc["act_runs"]))
check(sc["ops"] == 2, "timeline entries: %d, expected 2 (the replay stops at op 1)" % sc["ops"])
check(sc["diff"] == 1, "differing ranges: %d, expected 1" % sc["diff"])
check(sc["total"] == 96, "blocks drawn: %d, expected 96" % sc["total"])
check(len(re.findall(r'<li class="op[ "]', dom)) == 2, "op <li> elements in the DOM")
d = re.findall(r'<li class="diff">([^<]*)</li>', dom)
check(d == ["blocks 32..95 differ"], "differing-block list: %r" % d)

def png(path):
    """RGB rows of an 8-bit RGB/RGBA non-interlaced PNG."""
    b = open(path, "rb").read()
    assert b[:8] == b"\x89PNG\r\n\x1a\n", path + ": not a PNG"
    p, idat = 8, b""
    while p < len(b):
        n, t = struct.unpack(">I4s", b[p:p + 8])
        c = b[p + 8:p + 8 + n]
        if t == b"IHDR":
            w, h, depth, ctype, _, _, lace = struct.unpack(">IIBBBBB", c)
            assert depth == 8 and ctype in (2, 6) and lace == 0, "PNG format %d/%d/%d" % (depth, ctype, lace)
        elif t == b"IDAT":
            idat += c
        p += 12 + n
    bpp = 4 if ctype == 6 else 3
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            up, ul = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + up) & 255
            elif f == 3: line[i] = (line[i] + (a + up) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(up - ul), abs(a - ul), abs(a + up - 2 * ul)
                pr = a if pa <= pb and pa <= pc else up if pb <= pc else ul
                line[i] = (line[i] + pr) & 255
        rows.append(line)
        prev = line
    return lambda x, y: tuple(rows[y][x * bpp:x * bpp + 3])

COL = {"hole": (0xe6, 0xe6, 0xe6), "unw": (0xf2, 0xa3, 0x3a), "data": (0x2f, 0x6f, 0xd6),
       "several": (0xa0, 0x5f, 0xc8), "diff": (0xe0, 0x10, 0x2f), "empty": (0xfa, 0xfa, 0xfa)}
def near(c, want):
    return all(abs(a - b) <= 3 for a, b in zip(c, want))
def at_block(px, row, blk):
    x, y, w, h = sc["rows"][row]
    return px(int(x + (blk + 0.5) * w / sc["total"]), y + h // 2)

for shot, sel in ((sys.argv[2], 1), (sys.argv[3], 0)):
    px = png(shot)
    for k, (x, y, w, h) in sc["swatch"].items():
        check(near(px(x + w // 2, y + h // 2), COL[k]), "%s: legend swatch %s is %s" % (shot, k, px(x + w // 2, y + h // 2)))
    for row, blk, want in (("exp", 8, "data"), ("exp", 24, "hole"), ("exp", 60, "unw"),
                           ("act", 8, "data"), ("act", 24, "hole"), ("act", 60, "data"),
                           ("diff", 8, "empty"), ("diff", 60, "diff"), ("diff", 33, "diff"),
                           ("after", 8, "data"),
                           # the model after op 0 (#op=0) has no blocks past 16
                           ("after", 60, "unw" if sel == 1 else "empty")):
        c = at_block(px, row, blk)
        check(near(c, COL[want]), "%s: row %s block %d is %s, expected %s" % (shot, row, blk, c, want))
if fails:
    print("FAIL:\n  " + "\n  ".join(fails))
    sys.exit(1)
print("maps.html: DOM and both screenshots as expected")
EOF
