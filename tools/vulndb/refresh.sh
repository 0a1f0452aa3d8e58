#!/usr/bin/env bash
# Refresh the committed snapshot of the Go vulnerability database from a
# checkout of https://github.com/golang/vulndb (its data/osv directory: one
# OSV entry per file, the form govulncheck reads with -db file:///DIR).
#
#   tools/vulndb/refresh.sh /path/to/vulndb
#
# Writes tools/vulndb/osv.tar.gz (reproducible: sorted, fixed mtime and
# owner) and tools/vulndb/SNAPSHOT (commit, date, entry count).
set -euo pipefail
src="${1:?usage: $0 /path/to/vulndb-checkout}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ -d "${src}/data/osv" ]] || { echo "refresh.sh: ${src}/data/osv not found" >&2; exit 1; }
commit="$(git -C "${src}" log -1 --format=%H)"
date="$(git -C "${src}" log -1 --format=%cs)"
count="$(find "${src}/data/osv" -name 'GO-*.json' | wc -l)"
tar -C "${src}/data" --sort=name --mtime="${date} 00:00Z" --owner=0 --group=0 --numeric-owner \
  -cf - osv | gzip -n -9 >"${here}/osv.tar.gz"
printf 'commit=%s\ndate=%s\nentries=%s\n' "${commit}" "${date}" "${count}" >"${here}/SNAPSHOT"
echo "refresh.sh: golang/vulndb ${commit} (${date}), ${count} entries -> ${here}/osv.tar.gz"
