// SPDX-License-Identifier: Apache-2.0

package kafkaclient

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestExplainKafkaAuthFailure covers what Apache Kafka answers to a wrong
// password (kfake closes the connection instead, see TestCheck).
func TestExplainKafkaAuthFailure(t *testing.T) {
	c := Config{Brokers: []string{"k1:9093", "k2:9093"}, SASL: SASLConfig{Mechanism: "scram-sha-512", Username: "svc-retrieval", Password: NewSecret("pw")}}
	err := explain(c, fmt.Errorf("unable to dial: %w", kerr.SaslAuthenticationFailed), false, DefaultCheckTimeout)
	if !errors.Is(err, ErrAuthentication) || !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"k1:9093,k2:9093", "SCRAM-SHA-512", `"svc-retrieval"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	err = explain(c, kerr.UnsupportedSaslMechanism, false, DefaultCheckTimeout)
	if !strings.Contains(err.Error(), "do not enable SASL mechanism SCRAM-SHA-512") {
		t.Fatalf("err = %v", err)
	}
}
