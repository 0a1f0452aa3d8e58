// Package chaos holds kretrieve's chaos test (build tag chaos, run by `make
// chaos`): real kretrieve processes (a development broker with a data
// directory, two workers per stage, a gateway) under a paced load while
// their processes are SIGKILLed and SIGTERMed, partitions are added, the
// broker is SIGKILLed and a dead-letter replay is SIGKILLed. It reports how
// many requests were sent, answered, dead-lettered, duplicated and lost, and
// fails on any loss. The package has no non-test code.
package chaos
