package messages

// Timings are per-stage durations in milliseconds, measured by the workers
// on their own clocks. Queue times compare a record's timestamp with the
// worker's clock, so clock skew can make them negative. Each stage should
// keep the timings it received and fill in its own.
type Timings struct {
	// RetrievalQueueMS runs from the request record's timestamp to the
	// retrieval worker's start.
	RetrievalQueueMS float64 `json:"retrieval_queue_ms"`
	// RetrievalMS is the time spent searching.
	RetrievalMS float64 `json:"retrieval_ms"`
	// EnrichmentQueueMS runs from the candidates record's timestamp to the
	// enrichment worker's start.
	EnrichmentQueueMS float64 `json:"enrichment_queue_ms"`
	// EnrichmentMS is the time spent enriching.
	EnrichmentMS float64 `json:"enrichment_ms"`
}

// timings reads the optional timings member of obj. Absent or null
// timings, and absent or null durations, read as zero.
func (d *decoder) timings(obj object) Timings {
	l := loc{parent: "timings", index: -1}
	t := d.object(obj.get("timings"), l, false)
	return Timings{
		RetrievalQueueMS:  d.float(t, l, "retrieval_queue_ms", false),
		RetrievalMS:       d.float(t, l, "retrieval_ms", false),
		EnrichmentQueueMS: d.float(t, l, "enrichment_queue_ms", false),
		EnrichmentMS:      d.float(t, l, "enrichment_ms", false),
	}
}
