package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker"
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
