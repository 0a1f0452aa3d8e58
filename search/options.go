// SPDX-License-Identifier: Apache-2.0

package search

// defaultBatchSize is the number of documents indexed per bleve batch unless
// WithBatchSize says otherwise.
const defaultBatchSize = 1000

// config holds the settings Options change.
type config struct {
	batchSize int
	pos       Position
}

// newConfig applies opts to the defaults.
func newConfig(opts []Option) config {
	c := config{batchSize: defaultBatchSize}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// Option configures Build and NewMemory. Only this package's With*
// functions make one; a nil Option is ignored.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithBatchSize sets the number of documents indexed per batch. Each batch
// is analysed in memory and, for Build, written to disk before the next one
// starts; ctx is checked between batches. Larger batches index faster and
// use more memory. Default: 1000. Values below 1 are ignored.
func WithBatchSize(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.batchSize = n
		}
	})
}

// WithPosition stamps the index Build or NewMemory makes with pos: the
// position in the documents topic that the documents given reflect, from
// which Apply then continues (see Index.Position). Without it the index has
// the zero Position.
func WithPosition(pos Position) Option {
	return optionFunc(func(c *config) { c.pos = pos.clone() })
}
