#!/usr/bin/env bash
# Installs the Debian packages LMS needs to build and test (as root, or with
# sudo). Fast and silent when everything is already there.
set -euo pipefail

# libzstd-dev: LLVM's static libraries link zstd (scripts/check-static.sh).
# llvm-22 (llc) and lld (ld.lld): the host-arena tests compile a model apart
# from its host (test/Integration/Inputs/host_driver.py).
packages=(
  cmake ninja-build g++ lld python3 clang-format-14
  llvm-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libgtest-dev libgmock-dev
  coinor-libcbc-dev libgecode-dev pkg-config
  libzstd-dev
  python3-torch python3-torchvision python3-matplotlib
)
# LMS_DEPS_SKIP="torch" leaves out the PyTorch importer's packages (its tests
# then report UNSUPPORTED).
for skip in ${LMS_DEPS_SKIP:-}; do
  case "$skip" in
    torch) drop=" python3-torch python3-torchvision " ;;
    *) echo "deps.sh: unknown group '$skip'" >&2; exit 2 ;;
  esac
  kept=()
  for p in "${packages[@]}"; do
    [[ "$drop" == *" $p "* ]] || kept+=("$p")
  done
  packages=("${kept[@]}")
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps.sh: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps.sh: run as root (apt-get)" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
