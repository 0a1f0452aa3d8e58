package lag

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/internal/kafkatest"
)

func TestExplore(t *testing.T) {
	b := kafkatest.NewBroker(t, 3)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := t.Context()
	_, err = adm.CreateTopics(ctx, 3, 1, nil, "t1")
	fmt.Println("create", err)
	ts := time.Now().Add(-time.Minute)
	for i := 0; i < 5; i++ {
		r := &kgo.Record{Topic: "t1", Partition: 0, Value: []byte("x"), Timestamp: ts.Add(time.Duration(i) * time.Second)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "t1", Partition: 0, At: 2, LeaderEpoch: -1})
	resp, err := adm.CommitOffsets(ctx, "g1", os)
	fmt.Println("commit", resp, err)
	lags, err := adm.Lag(ctx, "g1", "nope")
	fmt.Println("lag err", err)
	for _, l := range lags.Sorted() {
		fmt.Printf("group %s state %q describeErr %v fetchErr %v\n", l.Group, l.State, l.DescribeErr, l.FetchErr)
		for _, m := range l.Lag.Sorted() {
			fmt.Printf("  %s/%d commit %+v start %d end %d lag %d err %v\n", m.Topic, m.Partition, m.Commit, m.Start.Offset, m.End.Offset, m.Lag, m.Err)
		}
	}
	all, err := adm.Lag(ctx)
	fmt.Println("all", len(all), err)
	c2, _ := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"t1": {0: kgo.NewOffset().At(2)}}))
	defer c2.Close()
	f := c2.PollFetches(ctx)
	f.EachRecord(func(r *kgo.Record) { fmt.Println(r.Offset, r.Timestamp, time.Since(r.Timestamp), r.Attrs.TimestampType()) })
}
