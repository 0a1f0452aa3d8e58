// SPDX-License-Identifier: Apache-2.0

package messages

// HeaderCorrelation names the record header that ties a request's outcome to
// the one call that published it: producer.Client sets it to a random value
// of its own on every request (callers cannot choose it), the consumer
// runtime copies it from each input record to the records it produces (the
// stages' outputs and dead letters), and the result collector hands an
// outcome only to the call whose value it carries. request_id alone is not
// enough: callers choose it, so two calls may share one.
const HeaderCorrelation = "kretrieve-correlation"
