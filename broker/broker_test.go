// SPDX-License-Identifier: Apache-2.0

package broker_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/internal/testutil/tlstest"
	"github.com/kretrieve/kretrieve/kafkaacl"
	"github.com/kretrieve/kretrieve/kafkaclient"
)

func TestConfigValidate(t *testing.T) {
	for _, bad := range []broker.Config{
		{Listen: "nohostport"},
		{Listen: "127.0.0.1:99999"},
		{Listen: "127.0.0.1:x"},
		{DefaultPartitions: -1},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if err := (broker.Config{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
}

func TestDataDirSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", DataDir: dir, DefaultPartitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprint("v", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// A group commits offset 5 on partition 0.
	adm := kadm.NewClient(cl)
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: "t", Partition: 0, At: 5, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, "g", offs); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	b.Close()

	b2, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	cl2, err := kgo.NewClient(kgo.SeedBrokers(b2.Addr()), kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	seen := map[string]bool{}
	for len(seen) < 20 && ctx.Err() == nil {
		cl2.PollFetches(ctx).EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
	if len(seen) != 20 {
		t.Fatalf("%d of 20 records survived the restart", len(seen))
	}
	fetched, err := kadm.NewClient(cl2).FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup("t", 0); !ok || o.At != 5 {
		t.Fatalf("committed offset after restart: %+v (found %v)", o, ok)
	}
}

func TestSecurityConfigValidate(t *testing.T) {
	ca := tlstest.NewCA(t, "broker-test")
	srv := ca.Server("broker")
	pw := kafkaclient.NewSecret("pw")
	rule := kafkaacl.Rule{Resource: kmsg.ACLResourceTypeTopic, Name: "t", Operation: kmsg.ACLOperationRead}
	for name, tt := range map[string]struct {
		cfg  broker.Config
		want string
	}{
		"cert without key":       {broker.Config{TLSCertFile: srv.CertFile}, "give both"},
		"client CA without cert": {broker.Config{TLSClientCAFile: ca.CertFile}, "needs a TLS certificate"},
		"client CA not PEM":      {broker.Config{TLSCertFile: srv.CertFile, TLSKeyFile: srv.KeyFile, TLSClientCAFile: srv.KeyFile}, "no PEM certificate"},
		"user without password":  {broker.Config{Users: []broker.User{{Name: "a"}}}, "empty password"},
		"user with a colon":      {broker.Config{Users: []broker.User{{Name: "a:b", Password: pw}}}, "name without"},
		"user twice":             {broker.Config{Users: []broker.User{{Name: "a", Password: pw}, {Name: "a", Password: pw}}}, "given twice"},
		"ACLs not enforced":      {broker.Config{Users: []broker.User{{Name: "a", Password: pw, ACLs: []kafkaacl.Rule{rule}}}}, "not enforced"},
		"ACLs without users":     {broker.Config{EnforceACLs: true}, "needs SASL users"},
	} {
		err := tt.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, tt.want)
		}
	}
	ok := broker.Config{TLSCertFile: srv.CertFile, TLSKeyFile: srv.KeyFile, TLSClientCAFile: ca.CertFile,
		Users: []broker.User{{Name: "a", Password: pw, ACLs: []kafkaacl.Rule{rule}}, {Name: "root", Password: pw, Superuser: true}}, EnforceACLs: true}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestACLsSeedTopics: with ACLs, a user may only do what its rules allow;
// Topics exist from the start.
func TestACLsSeedTopics(t *testing.T) {
	pw := kafkaclient.NewSecret("pw")
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", DefaultPartitions: 2, EnforceACLs: true, Topics: []string{"t", "u"},
		Users: []broker.User{{Name: "reader", Password: pw, ACLs: []kafkaacl.Rule{{Resource: kmsg.ACLResourceTypeTopic, Name: "t", Operation: kmsg.ACLOperationDescribe}}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cl, err := kgo.NewClient(kafkaclient.Options(kafkaclient.Config{Brokers: []string{b.Addr()},
		SASL: kafkaclient.SASLConfig{Mechanism: "SCRAM-SHA-256", Username: "reader", Password: pw}}, nil, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	topics, err := kadm.NewClient(cl).ListTopics(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if names := topics.Names(); len(names) != 1 || names[0] != "t" || len(topics["t"].Partitions) != 2 {
		t.Fatalf("visible topics %v", topics)
	}
	if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: "t", Value: []byte("x")}).FirstErr(); err == nil {
		t.Fatal("produced without WRITE")
	}
}

// TestDataDirIsPrivate: the data directory holds the SASL credentials
// (sasl.json), so every directory in it is 0700 and every file 0600,
// including those an earlier broker left world-readable.
func TestDataDirIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(filepath.Join(dir, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "old", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", DataDir: dir, DefaultPartitions: 1,
		Users: []broker.User{{Name: "alice", Password: kafkaclient.NewSecret("alice-pw")}}})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("running broker's data dir: %v, %v; want 0700", fi.Mode(), err)
	}
	opts := kafkaclient.Options(kafkaclient.Config{Brokers: []string{b.Addr()},
		SASL: kafkaclient.SASLConfig{Mechanism: "PLAIN", Username: "alice", Password: kafkaclient.NewSecret("alice-pw")}}, nil, nil)
	cl, err := kgo.NewClient(append(opts, kgo.AllowAutoTopicCreation())...)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	b.Close()
	sawSASL := false
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
		}
		sawSASL = sawSASL || d.Name() == "sasl.json"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sawSASL {
		t.Error("no sasl.json written")
	}
}

// TestCompactedTopics: CompactedTopics are created compacted, and a
// restart on the same data directory keeps them as they are.
func TestCompactedTopics(t *testing.T) {
	dir := t.TempDir()
	for range 2 {
		b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", DataDir: dir, DefaultPartitions: 3,
			Topics: []string{"plain"}, CompactedTopics: []string{"docs"}})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
		if err != nil {
			t.Fatal(err)
		}
		rc, err := kadm.NewClient(cl).DescribeTopicConfigs(t.Context(), "docs", "plain")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rc {
			got := ""
			for _, kv := range c.Configs {
				if kv.Key == "cleanup.policy" {
					got = kv.MaybeValue()
				}
			}
			if want := map[string]string{"docs": "compact", "plain": "delete"}[c.Name]; got != want {
				t.Errorf("%s: cleanup.policy %q, want %q", c.Name, got, want)
			}
		}
		cl.Close()
		b.Close()
	}
}
