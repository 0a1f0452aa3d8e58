// Package testsleeps keeps fixed sleeps out of kretrieve's tests: its test
// scans every _test.go file of the module and fails on a time.Sleep that is
// not on its allow-list, where each remaining sleep is simulated work or
// pacing, with the reason. A test that waits for something to happen waits
// for the event (a channel, a hook, or internal/poll), not a guessed time.
package testsleeps
