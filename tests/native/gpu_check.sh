#!/usr/bin/env bash
# Native GPU check: the attention passes of shaders/ run through OpenGL 3.3 in a real window under
# Xvfb (Mesa llvmpipe) and are compared with the scalar kernel on odd shapes (tolerance 1e-4
# relative). Usage: gpu_check.sh PATH/TO/attention_explainer   (prints the table; exit 1 on any miss)
set -euo pipefail
app="$1"
if log=$(xvfb-run -a -s "-screen 0 1280x800x24" "$app" --gpu-check 2>&1); then
  echo "$log"
  echo "ok - native GPU attention agrees with the scalar kernel"
else
  echo "$log"
  echo "not ok - native GPU attention: see the table above"
  exit 1
fi
