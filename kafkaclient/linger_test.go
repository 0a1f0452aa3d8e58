// SPDX-License-Identifier: Apache-2.0

package kafkaclient_test

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/kafkaclient"
)

// TestLingerReachesTheClient: the producer sends at once unless Linger
// says otherwise, whatever franz-go's own default (10 ms).
func TestLingerReachesTheClient(t *testing.T) {
	for _, want := range []time.Duration{0, 5 * time.Millisecond} {
		cl, err := kgo.NewClient(kafkaclient.Options(kafkaclient.Config{Brokers: []string{"127.0.0.1:1"}, Linger: want}, nil, nil)...)
		if err != nil {
			t.Fatal(err)
		}
		got := cl.OptValue(kgo.ProducerLinger)
		cl.Close()
		if got != want {
			t.Errorf("Linger %v: the client lingers %v", want, got)
		}
	}
}

func TestLingerValidated(t *testing.T) {
	for _, bad := range []time.Duration{-time.Millisecond, kafkaclient.MaxLinger + time.Millisecond} {
		err := kafkaclient.Config{Linger: bad}.Validate()
		if err == nil || !strings.Contains(err.Error(), "linger") {
			t.Errorf("Linger %v: error %v, want one naming linger", bad, err)
		}
	}
	if err := (kafkaclient.Config{Linger: kafkaclient.MaxLinger}).Validate(); err != nil {
		t.Errorf("Linger %v: %v", kafkaclient.MaxLinger, err)
	}
}
