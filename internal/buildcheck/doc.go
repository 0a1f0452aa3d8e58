// Package buildcheck holds the tests of the build's own claims (issue 14,
// finding 8): `make image` cross-compiles a static linux binary whatever
// the host, `make lint` runs go vet and staticcheck on both modules and
// govulncheck, and the main module's go.mod is free of the integration
// tier's dependencies, which live in integration/go.mod. It has no code.
package buildcheck
