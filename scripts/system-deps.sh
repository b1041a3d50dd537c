#!/usr/bin/env bash
# Install the Debian libraries Qt (PySide6) needs, only if some are missing.
set -euo pipefail
need_pkgs=()
check() { ldconfig -p 2>/dev/null | grep -q "$1" || need_pkgs+=("$2"); }
check 'libEGL.so.1' libegl1
check 'libGL.so.1' libgl1
check 'libxkbcommon.so.0' libxkbcommon0
check 'libglib-2.0.so.0' libglib2.0-0
check 'libfontconfig.so.1' libfontconfig1
check 'libdbus-1.so.3' libdbus-1-3
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_pkgs+=(fonts-dejavu-core)
# Generated text is often CJK: without a CJK font it is drawn as empty boxes. WenQuanYi Micro Hei is
# small (4 MB, Chinese, Japanese kana, Korean hangul); an installed Noto CJK does as well.
if [ ! -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] && ! ls /usr/share/fonts/opentype/noto/NotoSans*CJK* >/dev/null 2>&1; then
  need_pkgs+=(fonts-wqy-microhei)
fi
# Models write emoji: without a colour emoji font they are drawn as boxes. Only when fontconfig knows none.
if ! fc-list 2>/dev/null | grep -qi 'emoji'; then
  need_pkgs+=(fonts-noto-color-emoji)
fi
# Real (non-offscreen) windows also need the xcb platform libraries.
check 'libxcb-cursor.so.0' libxcb-cursor0
check 'libxcb-icccm.so.4' libxcb-icccm4
check 'libxcb-keysyms.so.1' libxcb-keysyms1
check 'libxcb-shape.so.0' libxcb-shape0
check 'libxkbcommon-x11.so.0' libxkbcommon-x11-0
check 'libxcb-xinerama.so.0' libxcb-xinerama0
check 'libxcb-randr.so.0' libxcb-randr0
check 'libxcb-render-util.so.0' libxcb-render-util0
check 'libxcb-image.so.0' libxcb-image0
[ ${#need_pkgs[@]} -eq 0 ] && exit 0
echo "Installing Debian libraries Qt needs: ${need_pkgs[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "Not root and no sudo: please install ${need_pkgs[*]} (apt-get install)" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >/dev/null
$SUDO apt-get install -y -q --no-install-recommends "${need_pkgs[@]}" >/dev/null
