// SPDX-License-Identifier: Apache-2.0

package messages_test

import (
	"errors"
	"fmt"

	"github.com/kretrieve/kretrieve/messages"
)

func ExampleDecodeRequest() {
	r, err := messages.DecodeRequest([]byte(`{"request_id":"req-42","query":"kafka consumer lag"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("id=%s query=%q top_k=%d schema_version=%d\n", r.RequestID, r.Query, r.TopK, r.SchemaVersion)

	_, err = messages.DecodeRequest([]byte(`{"query":"kafka consumer lag","top_k":500}`))
	fmt.Println(err)
	fmt.Println(errors.Is(err, messages.ErrInvalid), messages.Reason(err))

	_, err = messages.DecodeRequest([]byte(`kafka consumer lag`))
	fmt.Println(messages.Reason(err))
	// Output:
	// id=req-42 query="kafka consumer lag" top_k=10 schema_version=2
	// invalid request: top_k: must be between 1 and 100
	// true validation_error
	// decode_error
}

func ExampleEncodeRequest() {
	r := messages.Request{RequestID: "req-42", Query: "kafka consumer lag"}.WithDefaults()
	b, err := messages.EncodeRequest(r)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))
	// Output:
	// {"schema_version":1,"request_id":"req-42","query":"kafka consumer lag","top_k":10}
}

func ExampleTopics_All() {
	topics := messages.DefaultTopics()
	if err := topics.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	for _, topic := range topics.All() {
		fmt.Println(topic)
	}
	// Output:
	// retrieval.requests
	// retrieval.candidates
	// retrieval.results
	// retrieval.requests.dlq
	// retrieval.candidates.dlq
	// retrieval.results.dlq
	// retrieval.documents
	// retrieval.documents.dlq
}
