// SPDX-License-Identifier: Apache-2.0

package kafkaclient_test

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kretrieve/kretrieve/internal/testutil/tlstest"
	"github.com/kretrieve/kretrieve/kafkaclient"
)

// TestCheckClusterLearnsTheClusterID: the start-up check's metadata request
// brings back the id the broker reports, through TLS and SASL too; a check
// that fails returns none.
func TestCheckClusterLearnsTheClusterID(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.ClusterID("MkU3OEVBNTcwNTJENDM2Qk"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := kafkaclient.Config{Brokers: c.ListenAddrs()}
	id, err := kafkaclient.CheckCluster(t.Context(), cfg, nil, 10*time.Second)
	if err != nil || id != "MkU3OEVBNTcwNTJENDM2Qk" {
		t.Fatalf("CheckCluster = %q, %v; want the broker's id", id, err)
	}
	id, err = kafkaclient.WaitCluster(t.Context(), cfg, nil, kafkaclient.OneShot())
	if err != nil || id != "MkU3OEVBNTcwNTJENDM2Qk" {
		t.Fatalf("WaitCluster = %q, %v; want the broker's id", id, err)
	}

	ca := tlstest.NewCA(t, "kretrieve-test")
	b := secureBroker(t, ca, false)
	secured := kafkaclient.Config{
		Brokers: []string{b.Addr()},
		TLS:     kafkaclient.TLSConfig{CAFile: ca.CertFile},
		SASL:    kafkaclient.SASLConfig{Mechanism: kafkaclient.MechanismSCRAMSHA256, Username: "alice", Password: kafkaclient.NewSecret(password)},
	}
	if id, err := kafkaclient.CheckCluster(t.Context(), secured, nil, 10*time.Second); err != nil || id != "kfake" {
		t.Fatalf("CheckCluster over TLS and SASL = %q, %v; want kfake's default id", id, err)
	}
	secured.SASL.Password = kafkaclient.NewSecret("wrong-" + password)
	id, err = kafkaclient.CheckCluster(t.Context(), secured, nil, 10*time.Second)
	if !errors.Is(err, kafkaclient.ErrAuthentication) || id != "" {
		t.Fatalf("CheckCluster with a wrong password = %q, %v; want no id and ErrAuthentication", id, err)
	}
}
