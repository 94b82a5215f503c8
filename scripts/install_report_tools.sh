#!/usr/bin/env bash
# Tools the report tests use to look at the report as a person would (Debian packages):
#
#   chromium        headless screenshot of report.html (chromium --headless --screenshot=…)
#   poppler-utils   pdftotext (text of report.pdf) and pdftoppm (PDF pages → PNG)
#   fonts-dejavu-core, fonts-liberation
#                   the fonts report.html/report.pdf name first (WeasyPrint and Chromium
#                   both need them; without fonts the PDF has no glyphs)
#
# --no-install-recommends (lib.sh's apt_install) is enough for headless use.
# Idempotent: installed packages are left alone; a second run only checks (well under a second).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

apt_install chromium poppler-utils fonts-dejavu-core fonts-liberation

chromium_ver="$(chromium --version 2>/dev/null | awk '{print $2}')" || chromium_ver="unknown"
poppler_ver="$(pdftotext -v 2>&1 | awk 'NR == 1 {print $3}')" || poppler_ver="unknown"
echo "report tools: chromium=$chromium_ver poppler=$poppler_ver"
