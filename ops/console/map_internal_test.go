package console

import (
	"testing"

	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/pathwaytopic"
)

// TestResultsRateCountsEachRecordOnce: two collectors reading the whole
// results topic do not double its rate (run --serve has two: the run's
// and the gateway's); a group's edge keeps its own readers' rate.
func TestResultsRateCountsEachRecordOnce(t *testing.T) {
	row := func(dir pathway.Direction, topic, group string, rate float64) pathwaytopic.Row {
		return pathwaytopic.Row{Checkpoint: pathway.Checkpoint{Direction: dir, Topic: topic, Group: group}, Rate: rate}
	}
	v := pathwaytopic.View{Rows: []pathwaytopic.Row{
		row(pathway.Out, "retrieval.results", "", 24),
		row(pathway.In, "retrieval.results", "", 24),
		row(pathway.In, "retrieval.results", "", 24),
		row(pathway.Out, "retrieval.candidates", "", 24),
		row(pathway.In, "retrieval.candidates", "enrichment", 24),
		row(pathway.In, "retrieval.candidates", "other", 7),
	}}
	if rate, _, _ := pathwayOf(v, "retrieval.results", ""); rate != 24 {
		t.Errorf("results rate %v, want 24 (written), not the sum of its two readers", rate)
	}
	if rate, _, _ := pathwayOf(v, "retrieval.candidates", "enrichment"); rate != 24 {
		t.Errorf("candidates rate for group enrichment %v, want 24", rate)
	}
}
