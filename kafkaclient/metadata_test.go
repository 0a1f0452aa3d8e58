// SPDX-License-Identifier: Apache-2.0

package kafkaclient_test

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/kafkaclient"
)

// TestMetadataMaxAgeReachesTheClient: every client refreshes its metadata
// at Config.MetadataMaxAge (default kafkaclient.DefaultMetadataMaxAge, not
// franz-go's 5 minutes), and may refresh as often when asked to.
func TestMetadataMaxAgeReachesTheClient(t *testing.T) {
	for _, c := range []struct{ set, maxAge, minAge time.Duration }{
		{0, kafkaclient.DefaultMetadataMaxAge, 5 * time.Second},
		{time.Second, time.Second, time.Second},
		{time.Minute, time.Minute, 5 * time.Second},
	} {
		cl, err := kgo.NewClient(kafkaclient.Options(kafkaclient.Config{Brokers: []string{"127.0.0.1:1"}, MetadataMaxAge: c.set}, nil, nil)...)
		if err != nil {
			t.Fatalf("MetadataMaxAge %v: %v", c.set, err)
		}
		maxAge, minAge := cl.OptValue(kgo.MetadataMaxAge), cl.OptValue(kgo.MetadataMinAge)
		cl.Close()
		if maxAge != c.maxAge || minAge != c.minAge {
			t.Errorf("MetadataMaxAge %v: the client's max age is %v and min age %v, want %v and %v", c.set, maxAge, minAge, c.maxAge, c.minAge)
		}
	}
}

func TestMetadataMaxAgeValidated(t *testing.T) {
	for _, bad := range []time.Duration{-time.Second, kafkaclient.MinMetadataMaxAge - time.Millisecond, kafkaclient.MaxMetadataMaxAge + time.Second} {
		err := kafkaclient.Config{MetadataMaxAge: bad}.Validate()
		if err == nil || !strings.Contains(err.Error(), "metadata max age") {
			t.Errorf("MetadataMaxAge %v: %v", bad, err)
		}
	}
	for _, good := range []time.Duration{0, kafkaclient.MinMetadataMaxAge, kafkaclient.MaxMetadataMaxAge} {
		if err := (kafkaclient.Config{MetadataMaxAge: good}).Validate(); err != nil {
			t.Errorf("MetadataMaxAge %v: %v", good, err)
		}
	}
}
