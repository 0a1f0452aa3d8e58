// SPDX-License-Identifier: Apache-2.0

package corpus_test

import (
	"fmt"
	"strings"

	"github.com/kretrieve/kretrieve/corpus"
)

func ExampleReadJSONL() {
	input := `{"id":"faq-1","title":"Reset a password","body":"Open settings.","metadata":{"lang":"en","rank":3}}

{"id":"faq-2","title":""}
{"id":"faq-1","title":"Again"}
`
	docs, bad, err := corpus.ReadJSONL(strings.NewReader(input), false)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range docs {
		fmt.Println(d.ID, d.Source, d.Metadata)
	}
	for _, e := range bad {
		fmt.Println(e.Error())
	}
	// Output:
	// faq-1 jsonl map[lang:en rank:3]
	// line 3: title and body are both empty
	// line 4: duplicate id "faq-1"
}
