// Package chaos holds kretrieve's chaos test (build tag chaos, run by `make
// chaos`): real kretrieve processes (a development broker with a data
// directory, two workers per stage, a gateway) under a paced load while
// their processes are SIGKILLed and SIGTERMed, partitions are added, the
// broker is SIGKILLed and a dead-letter replay is SIGKILLed, while documents
// are changed and deleted on the documents topic the workers' indexes
// follow. It reports how many requests were sent, answered, dead-lettered,
// duplicated and lost, and fails on any loss, and checks that every worker
// ends with the topic's documents. The package has no non-test code.
package chaos
