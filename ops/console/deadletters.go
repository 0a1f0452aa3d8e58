// SPDX-License-Identifier: Apache-2.0

package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/ops/dlq"
	"github.com/kretrieve/kretrieve/ops/status"
)

// Bounds of the dead-letter list.
const (
	defaultLetters = 200
	maxLetters     = 1000
	// maxReadLetters bounds the letters read per partition and request,
	// counted in reasons and error_types.
	maxReadLetters = 10000
	// maxLetterText bounds each text a listed letter carries (its key,
	// reason and header values; longer ones are cut, with "…"), and
	// maxCountedText a reason or error type as counted: a letter's value is
	// never kept, only its size.
	maxLetterText  = 1024
	maxCountedText = 256
	// maxCountedReasons bounds the distinct reasons (and error types)
	// counted per request; the letters of any others are counted under
	// otherReasons.
	maxCountedReasons = 1000
	otherReasons      = "(other reasons)"
	// maxDeadLetterReads bounds the dead-letter lists read at once; more are
	// answered 503 with Retry-After at once.
	maxDeadLetterReads = 2
	// deadLetterFetchBytes bounds what a list's Kafka client fetches at a
	// time (a letter larger than it still comes, alone).
	deadLetterFetchBytes = 1 << 20
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
	select {
	case c.deadLetterReads <- struct{}{}:
		defer func() { <-c.deadLetterReads }()
	default:
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "busy: "+strconv.Itoa(maxDeadLetterReads)+" dead-letter lists are being read; retry in a second")
		return
	}
	sel := &letterSelection{letters: []letterDoc{}, limit: limit, reason: reason, errType: errType, reasons: map[string]int{}, errTypes: map[string]int{}}
	// These clients never produce (kafkaclient.ReadOnly: lists read at once
	// must not share the options' codec list).
	opts := slices.Concat(kafkaclient.ReadOnly(c.cfg.KafkaOptions), []kgo.Opt{kgo.FetchMaxBytes(deadLetterFetchBytes), kgo.FetchMaxPartitionBytes(deadLetterFetchBytes)})
	if err := dlq.Each(r.Context(), opts, c.cfg.Topology.DeadLetterTopics(), maxReadLetters, sel.add); err != nil {
		writeError(w, http.StatusBadGateway, "list: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, lettersDoc{Letters: sel.letters, ReplayAllowed: c.replayAllowed(), Total: sel.total,
		Reasons: status.Ranked(sel.reasons), ErrorTypes: errorTypeCounts(status.Ranked(sel.errTypes))})
}

// letterSelection keeps, of the letters read, the newest limit that match
// the filters, each cut to its listing (letterDoc), and counts them all
// by reason and error type: what a list holds is bounded by limit, not by
// what the topics hold.
type letterSelection struct {
	limit             int
	reason, errType   string
	letters           []letterDoc // newest first
	total             int
	reasons, errTypes map[string]int
}

func (s *letterSelection) add(l deadletters.Letter) {
	s.total++
	count(s.reasons, l.Reason)
	count(s.errTypes, l.ErrorType)
	if !strings.Contains(l.Reason, s.reason) || s.errType != "" && l.ErrorType != s.errType {
		return
	}
	// The position among the kept letters, newest first; after the
	// older ones of the same time (as a stable sort by time would).
	i := sort.Search(len(s.letters), func(i int) bool { return s.letters[i].Timestamp.Before(l.Timestamp) })
	if i >= s.limit {
		return
	}
	if len(s.letters) == s.limit {
		s.letters = s.letters[:s.limit-1]
	}
	s.letters = slices.Insert(s.letters, i, listing(l))
}

// listing is l as listed: its texts cut to maxLetterText, its value only
// its size.
func listing(l deadletters.Letter) letterDoc {
	d := letterDoc{DLQTopic: l.Topic, Partition: l.Partition, Offset: l.Offset, Timestamp: l.Timestamp,
		Key: cutText(string(l.Key), maxLetterText), Reason: cutText(l.Reason, maxLetterText), ErrorType: cutText(l.ErrorType, maxCountedText),
		OriginalTopic: cutText(l.OriginalTopic, maxCountedText), OriginalPartition: l.OriginalPartition, OriginalOffset: l.OriginalOffset,
		Attempts: l.Attempts, ConsumerGroup: cutText(l.ConsumerGroup, maxCountedText), TraceID: cutText(l.TraceID, maxCountedText),
		Truncated: cutText(l.Truncated, maxCountedText), ValueBytes: len(l.Value), Headers: []headerDoc{}}
	for _, h := range l.Headers {
		d.Headers = append(d.Headers, headerDoc{Key: cutText(h.Key, maxCountedText), Value: cutText(string(h.Value), maxLetterText)})
	}
	return d
}

// cutText is s as valid UTF-8, cut to at most n bytes plus "…" when longer.
func cutText(s string, n int) string {
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// count counts key, cut to maxCountedText, in counts: under otherReasons
// once counts holds maxCountedReasons keys.
func count(counts map[string]int, key string) {
	key = cutText(key, maxCountedText)
	if _, ok := counts[key]; !ok && len(counts) >= maxCountedReasons {
		key = otherReasons
	}
	counts[key]++
}

// errorTypeCounts renames ranked counts for the error_types field.
func errorTypeCounts(rcs []status.ReasonCount) []errorTypeCount {
	out := make([]errorTypeCount, 0, len(rcs))
	for _, rc := range rcs {
		out = append(out, errorTypeCount{ErrorType: rc.Reason, Count: rc.Count})
	}
	return out
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
