#!/usr/bin/env bash
# govulncheck on each module directory given, against GOVULNDB
# (https://vuln.go.dev by default). When that database cannot be reached
# (offline machines), against the committed snapshot tools/vulndb/osv.tar.gz
# instead, saying so and giving its date; with GOVULNCHECK_REQUIRED=1 an
# unreachable GOVULNDB is an error instead. Without a snapshot either,
# govulncheck is SKIPPED with a message: nothing was checked.
#
#   GOVULNCHECK=bin/tools/.../govulncheck tools/vulncheck.sh . integration
#
# Environment: GOVULNCHECK (the binary), GOVULNDB, GOVULNCHECK_REQUIRED,
# VULNDB_SNAPSHOT (default tools/vulndb/osv.tar.gz), VULNDB_DIR (where the
# snapshot is unpacked; default: a temporary directory).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
govulncheck="${GOVULNCHECK:?set GOVULNCHECK to the govulncheck binary}"
db="${GOVULNDB:-https://vuln.go.dev}"
snapshot="${VULNDB_SNAPSHOT:-${here}/vulndb/osv.tar.gz}"
required="${GOVULNCHECK_REQUIRED:-0}"
[[ $# -gt 0 ]] || set -- .

# use_snapshot switches db to the unpacked snapshot; false without one.
use_snapshot() {
  [[ -f "${snapshot}" ]] || return 1
  unpacked="${VULNDB_DIR:-}"
  if [[ -z "${unpacked}" ]]; then
    unpacked="$(mktemp -d "${TMPDIR:-/tmp}/vulndb.XXXXXX")"
    trap 'rm -rf "${unpacked}"' EXIT
  fi
  rm -rf "${unpacked}/osv" && mkdir -p "${unpacked}" && tar -C "${unpacked}" -xzf "${snapshot}"
  local meta="${snapshot%/*}/SNAPSHOT" date="unknown date" entries="?"
  if [[ -f "${meta}" ]]; then
    date="$(sed -n 's/^date=//p' "${meta}")"
    entries="$(sed -n 's/^entries=//p' "${meta}")"
  fi
  echo "govulncheck: ${db} is not reachable (offline?); checking against the committed snapshot of the Go vulnerability database of ${date} (${entries} entries): vulnerabilities published after ${date} are not known to it"
  db="file://${unpacked}/osv"
}

for mod in "$@"; do
  echo "govulncheck (${mod}, db ${db})"
  rc=0
  out="$(cd "${mod}" && "${govulncheck}" -db "${db}" ./... 2>&1)" || rc=$?
  if [[ ${rc} -ne 0 && "${db}" == http* ]] && grep -q '^govulncheck: fetching vulnerabilities' <<<"${out}"; then
    echo "  $(tail -1 <<<"${out}")"
    if [[ "${required}" == 1 ]]; then
      echo "govulncheck: GOVULNCHECK_REQUIRED=1 and ${db} is not reachable" >&2
      exit 1
    fi
    if ! use_snapshot; then
      echo "govulncheck SKIPPED: no database is reachable and there is no snapshot at ${snapshot}; nothing was checked"
      exit 0
    fi
    rc=0
    out="$(cd "${mod}" && "${govulncheck}" -db "${db}" ./... 2>&1)" || rc=$?
  fi
  echo "${out}"
  [[ ${rc} -eq 0 ]] || exit "${rc}"
done
