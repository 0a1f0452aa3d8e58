package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/ops/dlq"
	"github.com/kretrieve/kretrieve/ops/status"
)

// Bounds of the dead-letter list.
const (
	defaultLetters = 200
	maxLetters     = 1000
	// maxReadLetters bounds the letters read per request, counted in
	// reasons and error_types.
	maxReadLetters = 10000
)

type letterDoc struct {
	DLQTopic          string      `json:"dlq_topic"`
	Partition         int32       `json:"partition"`
	Offset            int64       `json:"offset"`
	Timestamp         time.Time   `json:"timestamp"`
	Key               string      `json:"key"`
	Reason            string      `json:"reason"`
	ErrorType         string      `json:"error_type"`
	OriginalTopic     string      `json:"original_topic"`
	OriginalPartition int32       `json:"original_partition"`
	OriginalOffset    int64       `json:"original_offset"`
	Attempts          int         `json:"attempts"`
	ConsumerGroup     string      `json:"consumer_group"`
	TraceID           string      `json:"trace_id"`
	Truncated         string      `json:"truncated"`
	ValueBytes        int         `json:"value_bytes"`
	Headers           []headerDoc `json:"headers"`
}

type headerDoc struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type errorTypeCount struct {
	ErrorType string `json:"error_type"`
	Count     int    `json:"count"`
}

type lettersDoc struct {
	Letters       []letterDoc          `json:"letters"`
	Reasons       []status.ReasonCount `json:"reasons"`
	ErrorTypes    []errorTypeCount     `json:"error_types"`
	ReplayAllowed bool                 `json:"replay_allowed"`
	// Total is the letters read, before the filters and the limit.
	Total int `json:"total"`
}

// listDeadLetters lists the dead letters of the pipeline's dead-letter
// topics, newest first, filtered by ?reason= (a substring) and
// ?error_type=, at most ?limit= of them; the counts by reason and error
// type are of every letter read.
func (c *Console) listDeadLetters(w http.ResponseWriter, r *http.Request, _ *live) {
	q := r.URL.Query()
	reason, errType := q.Get("reason"), q.Get("error_type")
	if err := checkErrorType(errType); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	limit := defaultLetters
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxLetters {
			writeError(w, http.StatusBadRequest, "limit: 1 to "+strconv.Itoa(maxLetters))
			return
		}
		limit = n
	}
	letters, err := dlq.List(r.Context(), c.cfg.KafkaOptions, c.cfg.Topology.DeadLetterTopics(), maxReadLetters)
	if err != nil {
		writeError(w, http.StatusBadGateway, err.Error())
		return
	}
	doc := lettersDoc{Letters: []letterDoc{}, ReplayAllowed: c.replayAllowed(), Total: len(letters),
		Reasons: status.CountBy(letters, func(l deadletters.Letter) string { return l.Reason })}
	for _, rc := range status.CountBy(letters, func(l deadletters.Letter) string { return l.ErrorType }) {
		doc.ErrorTypes = append(doc.ErrorTypes, errorTypeCount{ErrorType: rc.Reason, Count: rc.Count})
	}
	if doc.ErrorTypes == nil {
		doc.ErrorTypes = []errorTypeCount{}
	}
	slices.SortStableFunc(letters, func(a, b deadletters.Letter) int { return b.Timestamp.Compare(a.Timestamp) })
	for _, l := range letters {
		if len(doc.Letters) == limit {
			break
		}
		if !strings.Contains(l.Reason, reason) || errType != "" && l.ErrorType != errType {
			continue
		}
		d := letterDoc{DLQTopic: l.Topic, Partition: l.Partition, Offset: l.Offset, Timestamp: l.Timestamp,
			Key: strings.ToValidUTF8(string(l.Key), "\uFFFD"), Reason: l.Reason, ErrorType: l.ErrorType,
			OriginalTopic: l.OriginalTopic, OriginalPartition: l.OriginalPartition, OriginalOffset: l.OriginalOffset,
			Attempts: l.Attempts, ConsumerGroup: l.ConsumerGroup, TraceID: l.TraceID, Truncated: l.Truncated,
			ValueBytes: len(l.Value), Headers: []headerDoc{}}
		for _, h := range l.Headers {
			d.Headers = append(d.Headers, headerDoc{Key: strings.ToValidUTF8(h.Key, "\uFFFD"), Value: strings.ToValidUTF8(string(h.Value), "\uFFFD")})
		}
		doc.Letters = append(doc.Letters, d)
	}
	writeJSON(w, http.StatusOK, doc)
}

func checkErrorType(t string) error {
	switch t {
	case "", deadletters.ErrorTypePermanent, deadletters.ErrorTypeTransient:
		return nil
	}
	return errors.New("error_type: " + deadletters.ErrorTypePermanent + " or " + deadletters.ErrorTypeTransient)
}

func (c *Console) replayAllowed() bool { return c.cfg.AllowReplay && c.collab.replay != nil }

type replayBody struct {
	Reason    string `json:"reason"`
	ErrorType string `json:"error_type"`
}

type replayDoc struct {
	Replayed int `json:"replayed"`
	Skipped  int `json:"skipped"`
	Failed   int `json:"failed"`
}

// replayDeadLetters replays the dead letters the body selects, only when
// the console was started with replay allowed (the request carries
// CSRFHeader: api checked it).
func (c *Console) replayDeadLetters(w http.ResponseWriter, r *http.Request, _ *live) {
	if !c.replayAllowed() {
		writeError(w, http.StatusForbidden, "replay is disabled: start the console with --allow-replay")
		return
	}
	var body replayBody
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSearchBody)).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "body: "+err.Error())
		return
	}
	if err := checkErrorType(body.ErrorType); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	res, err := c.collab.replay(r.Context(), dlq.ReplayConfig{
		Topics: c.cfg.Topology.DeadLetterTopics(), Group: dlq.DefaultReplayGroup,
		Reason: body.Reason, ErrorType: body.ErrorType,
	})
	doc := replayDoc{Replayed: res.Replayed, Skipped: res.Skipped, Failed: res.Failed}
	if err != nil {
		c.collab.logger.WarnContext(r.Context(), "console replay", "err", err, "replayed", res.Replayed)
		writeJSON(w, http.StatusBadGateway, struct {
			replayDoc
			Error string `json:"error"`
		}{doc, err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, doc)
}
