#!/usr/bin/env bash
# govulncheck on each module directory given, against GOVULNDB
# (https://vuln.go.dev by default). When that database cannot be reached
# (offline machines), against the committed snapshot tools/vulndb/osv.tar.gz
# instead, saying so and giving its date; with GOVULNCHECK_REQUIRED=1 an
# unreachable GOVULNDB is an error instead. Without a snapshot either,
# govulncheck is SKIPPED with a message: nothing was checked.
#
#   GOVULNCHECK=bin/tools/.../govulncheck tools/vulncheck.sh . integration tools/jaeger
#
# A tools module (tools/jaeger, tools/prometheus: a tools.go behind
# //go:build tools that blank-imports the programs it builds) is checked on
# those programs' packages. A module's findings fail the run unless every
# one of them is listed for that module in VULNCHECK_ACCEPTED (default
# tools/vulncheck.accepted: "<module> <GO-id> <why it remains>"), which
# docs/security.md explains; a new finding always fails.
#
# Environment: GOVULNCHECK (the binary), GOVULNDB, GOVULNCHECK_REQUIRED,
# VULNDB_SNAPSHOT (default tools/vulndb/osv.tar.gz), VULNDB_DIR (where the
# snapshot is unpacked; default: a temporary directory), VULNCHECK_ACCEPTED.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
govulncheck="${GOVULNCHECK:?set GOVULNCHECK to the govulncheck binary}"
db="${GOVULNDB:-https://vuln.go.dev}"
snapshot="${VULNDB_SNAPSHOT:-${here}/vulndb/osv.tar.gz}"
required="${GOVULNCHECK_REQUIRED:-0}"
accepted="${VULNCHECK_ACCEPTED:-${here}/vulncheck.accepted}"
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

# patterns prints what to check in module $1: the programs a tools module's
# tools.go imports, or ./...
patterns() {
  if [[ -f "$1/tools.go" ]] && grep -q '^//go:build tools' "$1/tools.go"; then
    (cd "$1" && GOWORK=off go list -e -tags tools -f '{{join .Imports " "}}' .)
  else
    echo ./...
  fi
}

# only_accepted reports whether every finding (Vulnerability #N: GO-…) in
# output $2 of module $1 is listed for it in the accepted file.
only_accepted() {
  local ids id ok=0
  ids="$(sed -n 's/^Vulnerability #[0-9]*: \(GO-[0-9-]*\).*/\1/p' <<<"$2" | sort -u)"
  [[ -n "${ids}" && -f "${accepted}" ]] || return 1
  for id in ${ids}; do
    if ! awk -v m="$1" -v id="${id}" '$1 == m && $2 == id {found=1} END {exit !found}' "${accepted}"; then
      echo "govulncheck (${1}): ${id} is not accepted in ${accepted#"${here%/tools}/"}"
      ok=1
    fi
  done
  [[ ${ok} -eq 0 ]] && echo "govulncheck (${1}): all $(wc -w <<<"${ids}") findings are accepted, each with its reason, in ${accepted#"${here%/tools}/"} (see docs/security.md)"
  return "${ok}"
}

for mod in "$@"; do
  mod="${mod%/}"
  pkgs="$(patterns "${mod}")"
  echo "govulncheck (${mod}, db ${db}): ${pkgs}"
  rc=0
  # shellcheck disable=SC2086 # pkgs is a list of package patterns
  out="$(cd "${mod}" && "${govulncheck}" -db "${db}" ${pkgs} 2>&1)" || rc=$?
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
    # shellcheck disable=SC2086
    out="$(cd "${mod}" && "${govulncheck}" -db "${db}" ${pkgs} 2>&1)" || rc=$?
  fi
  echo "${out}"
  if [[ ${rc} -eq 3 ]] && only_accepted "${mod}" "${out}"; then
    rc=0
  fi
  [[ ${rc} -eq 0 ]] || exit "${rc}"
done
