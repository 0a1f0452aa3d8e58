// SPDX-License-Identifier: Apache-2.0

package pipeline

import (
	"context"

	"github.com/kretrieve/kretrieve/docfeed"
)

// NewFollower returns a follower of the pipeline's documents topic into
// the index in dir ("" a temporary one), named name: the stage whose index it
// is, which names its pathway checkpoints (see package docfeed). Run it,
// wait for it to be ready before starting workers over its Index, and
// Close it when done.
func (p *Pipeline) NewFollower(ctx context.Context, name, dir string) (*docfeed.Follower, error) {
	return docfeed.New(ctx, docfeed.Config{Topic: p.Topology().Documents, Name: name, Dir: dir},
		p.tracer(name, false), p.ClientOptions(), docfeed.WithLogger(p.collab.Logger), docfeed.WithMeterProvider(p.collab.MeterProvider))
}
