#!/usr/bin/env bash
# Native smoke test: the explainer opens a real window under Xvfb (Mesa llvmpipe), draws frames of
# every view, writes a screenshot, and exits cleanly. Usage: smoke.sh PATH/TO/attention_explainer
set -euo pipefail
app="$1"
out="$(cd "$(dirname "$0")/../.." && pwd)/tests/e2e/out"
mkdir -p "$out"
status=0
for view in flow weights heads library steps derive break mistakes build cost practice compare train; do
  ppm="$out/native-$view.ppm"
  rm -f "$ppm"
  if ! log=$(xvfb-run -a -s "-screen 0 1280x800x24" "$app" --frames 8 --screenshot "$ppm" --state "{\"view\":\"$view\"}" 2>&1); then
    echo "not ok - native $view: exit status non-zero: $log"; status=1; continue
  fi
  case "$log" in *"drew 8 frames"*) ;; *) echo "not ok - native $view: no frame count in: $log"; status=1; continue ;; esac
  # A real frame is a 1280x800 image with many colours, not a blank clear colour.
  colours=$(/usr/bin/python3 -c "from PIL import Image; im=Image.open('$ppm'); print(im.size[0], im.size[1], len(set(im.getdata())))")
  read -r w h n <<<"$colours"
  if [ "$w" != 1280 ] || [ "$h" != 800 ] || [ "$n" -lt 50 ]; then
    echo "not ok - native $view: screenshot ${w}x${h} with $n colours"; status=1; continue
  fi
  /usr/bin/python3 -c "from PIL import Image; Image.open('$ppm').save('${ppm%.ppm}.png')"
  rm -f "$ppm"
  echo "ok - native $view: 8 frames, ${w}x${h}, $n colours"
done
# Bad flags are refused with exit status 2, without opening a window.
if "$app" --frames 2>/dev/null; then echo "not ok - native: incomplete flag accepted"; status=1; else
  [ $? -eq 2 ] && echo "ok - native: bad flag refused with status 2" || { echo "not ok - native: bad flag status"; status=1; }
fi
exit $status
