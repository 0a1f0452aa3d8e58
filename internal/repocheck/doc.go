// SPDX-License-Identifier: Apache-2.0

// Package repocheck holds the tests of the repository's own claims. It has
// no code.
//
//   - The build (issue 14, finding 8): `make image` cross-compiles a static
//     linux binary whatever the host, `make lint` runs go vet and
//     staticcheck on both modules and govulncheck, and the main module's
//     go.mod is free of the integration tier's dependencies, which live in
//     integration/go.mod.
//   - No fixed sleeps in tests: every _test.go file of the module is
//     scanned for a time.Sleep that is not on its allow-list, where each
//     remaining sleep is simulated work or pacing, with the reason. A test
//     that waits for something to happen waits for the event (a channel, a
//     hook, or internal/testutil/poll), not a guessed time.
//   - One option idiom (docs/ARCHITECTURE.md, "Options"): every exported
//     Option type is a sealed interface of its own package, and handing a
//     component another package's option does not compile (go build with
//     an overlay).
//   - The house: the import graph has no cycles, is at most eight packages
//     deep, and the core data path never imports the operator's wing (ops/).
package repocheck
