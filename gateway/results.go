// SPDX-License-Identifier: Apache-2.0

package gateway

import (
	"cmp"
	"container/list"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/results"
)

// Defaults of the results that GET /v1/requests/{id} reads.
const (
	DefaultResultRetention = 5 * time.Minute
	DefaultMaxResults      = 10000
	DefaultMaxResultBytes  = 64 << 20
)

// ResultsPath is the path under which POST /v1/requests's Location points
// at the request's result: ResultsPath + its result id.
const ResultsPath = "/v1/requests/"

// resultIDLen is a result id's length: 128 random bits in lowercase hex.
const resultIDLen = 32

// heldOverhead estimates what one held request costs beyond its ids and
// answer (the entry, its map slot and list element), counted against
// MaxResultBytes.
const heldOverhead = 256

// PendingResponse is the body of GET /v1/requests/{id} (202) while the
// request's outcome has not arrived.
type PendingResponse struct {
	RequestID string `json:"request_id"`
	TraceID   string `json:"trace_id"`
	// State is "pending".
	State string `json:"state"`
}

// held is an enqueued request whose outcome GET /v1/requests/{id} reads.
type held struct {
	id, owner          string // the result id; the caller's identity (callerIdentity)
	requestID, traceID string
	posted, expires    time.Time
	call               *producer.Call // nil until published, and once done
	done               bool
	status             int    // with done: the answer's status
	body               []byte // with done: the answer's JSON
	elem               *list.Element
}

// size is what h counts against MaxResultBytes.
func (h *held) size() int64 {
	return int64(heldOverhead + len(h.id) + len(h.owner) + len(h.requestID) + len(h.traceID) + len(h.body))
}

// tombstone remembers an evicted request until its retention would have
// ended, so that its caller is told it was evicted, not that it is unknown.
type tombstone struct {
	owner   string
	expires time.Time
}

// heldState is what GET /v1/requests/{id} finds.
type heldState int

const (
	stateUnknown heldState = iota // unknown, expired, or another caller's
	statePending
	stateDone
	stateEvicted
)

// resultStore holds the enqueued requests' outcomes for their retention,
// bounded in count and bytes: beyond either bound the oldest are evicted.
// Entries are kept in the order of their POST, which is also the order in
// which their retention ends.
type resultStore struct {
	retention time.Duration
	maxCount  int
	maxBytes  int64

	mu      sync.Mutex
	byID    map[string]*held
	order   list.List // of *held, oldest first
	bytes   int64
	evicted map[string]tombstone
	tombs   list.List // of evicted ids, oldest first
}

func newResultStore(retention time.Duration, maxCount int, maxBytes int64) *resultStore {
	return &resultStore{retention: retention, maxCount: maxCount, maxBytes: maxBytes,
		byID: make(map[string]*held), evicted: make(map[string]tombstone)}
}

// add holds a new request of owner and returns its result id, evicting the
// oldest held requests while the count is full or the bytes over.
func (s *resultStore) add(owner string) string {
	var b [resultIDLen / 2]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now() // under the lock: the order of the list is the order of expiry
	h := &held{id: hex.EncodeToString(b[:]), owner: owner, posted: now, expires: now.Add(s.retention)}
	s.sweep(now)
	for s.order.Len() >= s.maxCount {
		s.evict(s.order.Front().Value.(*held))
	}
	h.elem = s.order.PushBack(h)
	s.byID[h.id] = h
	s.bytes += h.size()
	for s.bytes > s.maxBytes && s.order.Front() != h.elem {
		s.evict(s.order.Front().Value.(*held))
	}
	return h.id
}

// published attaches the published call to id, or withdraws the call's
// claim when id was evicted meanwhile.
func (s *resultStore) published(id string, call *producer.Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.byID[id]
	if !ok {
		call.Forget()
		return
	}
	s.bytes -= h.size()
	h.requestID, h.traceID = call.Request.RequestID, call.TraceID
	s.bytes += h.size()
	if !h.done {
		h.call = call
	}
}

// remove drops id, whose request was not published.
func (s *resultStore) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.byID[id]; ok {
		s.drop(h)
	}
}

// complete records out, id's outcome: its answer is outcomeAnswer's, as
// POST /v1/search would have given it. An outcome for a request no longer
// held (expired, evicted) is dropped.
func (s *resultStore) complete(id string, out results.Outcome) {
	s.mu.Lock()
	h, ok := s.byID[id]
	if !ok || h.done {
		s.mu.Unlock()
		return
	}
	requestID, traceID, posted := h.requestID, h.traceID, h.posted
	s.mu.Unlock()
	status, answer, _ := outcomeAnswer(cmp.Or(requestID, out.RequestID), cmp.Or(traceID, out.TraceID), out, nil, time.Since(posted), 0)
	body, err := json.Marshal(answer)
	if err != nil { // a result decoded from JSON encodes again
		status, body = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"the result could not be encoded"}}`)
	}
	body = append(body, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok = s.byID[id]; !ok || h.done {
		return
	}
	s.bytes -= h.size()
	h.done, h.status, h.body, h.call = true, status, body, nil
	s.bytes += h.size()
	for s.bytes > s.maxBytes && s.order.Len() > 0 {
		s.evict(s.order.Front().Value.(*held))
	}
}

// get returns a copy of id's held request when owner may read it, and its
// state.
func (s *resultStore) get(id, owner string) (held, heldState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(time.Now())
	if h, ok := s.byID[id]; ok && h.owner == owner {
		if h.done {
			return *h, stateDone
		}
		return *h, statePending
	}
	if t, ok := s.evicted[id]; ok && t.owner == owner {
		return held{}, stateEvicted
	}
	return held{}, stateUnknown
}

// sweep drops the held requests and tombstones whose retention ended.
// s.mu is held.
func (s *resultStore) sweep(now time.Time) {
	for e := s.order.Front(); e != nil && !now.Before(e.Value.(*held).expires); e = s.order.Front() {
		s.drop(e.Value.(*held))
	}
	for e := s.tombs.Front(); e != nil && !now.Before(s.evicted[e.Value.(string)].expires); e = s.tombs.Front() {
		delete(s.evicted, s.tombs.Remove(e).(string))
	}
}

// evict drops h before its retention ended, leaving a tombstone (at most
// maxCount of them, the oldest dropped first). s.mu is held.
func (s *resultStore) evict(h *held) {
	s.drop(h)
	s.evicted[h.id] = tombstone{owner: h.owner, expires: h.expires}
	s.tombs.PushBack(h.id)
	for s.tombs.Len() > s.maxCount {
		delete(s.evicted, s.tombs.Remove(s.tombs.Front()).(string))
	}
}

// drop forgets h, withdrawing its claim on an outcome still awaited. s.mu
// is held.
func (s *resultStore) drop(h *held) {
	s.order.Remove(h.elem)
	delete(s.byID, h.id)
	s.bytes -= h.size()
	if h.call != nil {
		h.call.Forget()
	}
}

// validResultID reports whether id has the form of a result id.
func validResultID(id string) bool {
	if len(id) != resultIDLen {
		return false
	}
	for i := range len(id) {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// callerIdentity is the identity of r's caller that owns the requests it
// enqueues: the SHA-256 of its verified TLS client certificate, "" without
// one (then the result id alone is the capability).
func callerIdentity(r *http.Request) string {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return ""
	}
	sum := sha256.Sum256(r.TLS.PeerCertificates[0].Raw)
	return hex.EncodeToString(sum[:])
}

// startHeld publishes body as an enqueued request whose outcome is held
// for GET /v1/requests/{id}, and returns its result id: "" when the
// client has no Collector (the request is only published).
func (g *Gateway) startHeld(r *http.Request, body []byte) (*producer.Call, string, error) {
	if g.client.Collector == nil {
		call, err := g.client.StartJSON(r.Context(), body, false)
		return call, "", err
	}
	id := g.results.add(callerIdentity(r))
	call, err := g.client.StartJSONNotify(r.Context(), body, func(out results.Outcome) { g.results.complete(id, out) })
	if err != nil {
		g.results.remove(id)
		return nil, "", err
	}
	g.results.published(id, call)
	return call, id, nil
}

// result answers GET /v1/requests/{id}: the outcome of an enqueued request
// as POST /v1/search would have answered it, 202 with Retry-After while it
// is pending, 404 when the id is unknown, expired, evicted or another
// caller's, 400 when it is not a result id.
func (g *Gateway) result(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !validResultID(id) {
		writeJSON(w, http.StatusBadRequest, errorBody{APIError{Code: "invalid_id", Field: "id",
			Message: "not a result id: use the Location that POST /v1/requests answered (32 lowercase hex digits after " + ResultsPath + ")"}})
		return
	}
	h, state := g.results.get(id, callerIdentity(r))
	switch state {
	case statePending:
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusAccepted, PendingResponse{RequestID: h.requestID, TraceID: h.traceID, State: "pending"})
	case stateDone:
		writeBody(w, h.status, h.body)
	case stateEvicted:
		writeJSON(w, http.StatusNotFound, errorBody{APIError{Code: "evicted", Message: fmt.Sprintf(
			"the result was evicted before its retention ended: this gateway holds at most %d results and %d bytes of them, the oldest evicted first",
			g.cfg.MaxResults, g.cfg.MaxResultBytes)}})
	default:
		writeJSON(w, http.StatusNotFound, errorBody{APIError{Code: "not_found", Message: fmt.Sprintf(
			"unknown or expired result id: a result is kept %s after its POST /v1/requests, by the gateway instance that accepted it, for the caller that sent it",
			g.cfg.ResultRetention)}})
	}
}
