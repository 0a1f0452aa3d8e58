// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"github.com/kretrieve/kretrieve/tracecontext"
)

// limitedHeaders is a record's [tracecontext.HeaderCarrier] with the W3C
// limits of package tracecontext applied to its values: last header wins,
// as with the carrier. It holds one pointer, so passing it as an interface
// does not allocate.
type limitedHeaders struct{ tracecontext.HeaderCarrier }

func (c limitedHeaders) Get(key string) string {
	v := c.HeaderCarrier.Get(key)
	switch key {
	case tracecontext.TraceparentHeader:
		return tracecontext.LimitTraceparent(v)
	case tracecontext.TracestateHeader:
		return tracecontext.LimitTraceState(v)
	case tracecontext.BaggageHeader:
		return tracecontext.LimitBaggage(v)
	}
	return v
}
