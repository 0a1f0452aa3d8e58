// SPDX-License-Identifier: Apache-2.0

package messages_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
)

func TestTopicsValidate(t *testing.T) {
	longest := strings.Repeat("t", messages.MaxTopicLen-len(messages.DLQSuffix))
	tests := []struct {
		name    string
		topics  messages.Topics
		wantErr string // substring of the error; "" when valid
	}{
		{name: "defaults", topics: messages.DefaultTopics()},
		{name: "all legal characters", topics: messages.Topics{Requests: "a-Z_0.9", Candidates: "b", Results: "c"}},
		{name: "longest with room for dlq", topics: messages.Topics{Requests: longest, Candidates: "b", Results: "c"}},
		{name: "empty requests", topics: messages.Topics{Candidates: "b", Results: "c"}, wantErr: "requests topic: empty"},
		{name: "empty candidates", topics: messages.Topics{Requests: "a", Results: "c"}, wantErr: "candidates topic: empty"},
		{name: "empty results", topics: messages.Topics{Requests: "a", Candidates: "b"}, wantErr: "results topic: empty"},
		{name: "dot", topics: messages.Topics{Requests: ".", Candidates: "b", Results: "c"}, wantErr: "requests topic"},
		{name: "dot dot", topics: messages.Topics{Requests: "a", Candidates: "..", Results: "c"}, wantErr: "candidates topic"},
		{name: "too long for dlq", topics: messages.Topics{Requests: longest + "t", Candidates: "b", Results: "c"}, wantErr: "requests topic: longer than 245"},
		{name: "249 characters", topics: messages.Topics{Requests: "a", Candidates: "b", Results: strings.Repeat("r", 249)}, wantErr: "results topic"},
		{name: "slash", topics: messages.Topics{Requests: "a/b", Candidates: "b", Results: "c"}, wantErr: "illegal character '/'"},
		{name: "space", topics: messages.Topics{Requests: "a", Candidates: "b c", Results: "c"}, wantErr: "illegal character ' '"},
		{name: "non-ascii", topics: messages.Topics{Requests: "a", Candidates: "b", Results: "résultats"}, wantErr: "illegal character"},
		{name: "ends with dlq", topics: messages.Topics{Requests: "a", Candidates: "b", Results: "c.dlq"}, wantErr: `"c.dlq" ends with ".dlq"`},
		{name: "same requests and results", topics: messages.Topics{Requests: "a", Candidates: "b", Results: "a"}, wantErr: `requests and results topics are both "a"`},
		{name: "same candidates and results", topics: messages.Topics{Requests: "a", Candidates: "b", Results: "b"}, wantErr: "candidates and results"},
		{name: "dot and underscore collide", topics: messages.Topics{Requests: "r.x", Candidates: "r_x", Results: "c"}, wantErr: "collide"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.topics.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("got no error, want one containing %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("error %q does not contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestTopicsAll(t *testing.T) {
	got := messages.DefaultTopics().All()
	want := []string{
		"retrieval.requests", "retrieval.candidates", "retrieval.results",
		"retrieval.requests.dlq", "retrieval.candidates.dlq", "retrieval.results.dlq",
		"retrieval.documents", "retrieval.documents.dlq",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, topic := range []string{got[3], got[4], got[5], got[7]} {
		if err := (messages.Topics{Requests: topic, Candidates: "b", Results: "c"}).Validate(); err == nil {
			t.Errorf("Validate accepted dead-letter topic %q as a pipeline topic", topic)
		}
	}
}

func TestDLQTopic(t *testing.T) {
	if got := messages.DLQTopic("orders"); got != "orders.dlq" {
		t.Errorf("DLQTopic(orders) = %q", got)
	}
}

func TestTopicsValidateDocuments(t *testing.T) {
	base := messages.Topics{Requests: "a", Candidates: "b", Results: "c"}
	for _, c := range []struct {
		documents, wantErr string
	}{
		{"", ""},
		{"d", ""},
		{"a", "requests and documents topics are both"},
		{"d.dlq", "documents topic"},
		{"..", "documents topic"},
	} {
		tp := base
		tp.Documents = c.documents
		err := tp.Validate()
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("documents %q: Validate() = %v, want %q", c.documents, err, c.wantErr)
		}
	}
}
