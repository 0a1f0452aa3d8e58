package configdoc

import (
	"reflect"
	"testing"
)

func TestReadRepositoryREADME(t *testing.T) {
	cmds := []string{"broker", "retrieval", "run"}
	kre, otel, err := Read("../../docs/configuration.md", cmds)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(kre["KRETRIEVE_LOG_FORMAT"], cmds) || !otel["OTEL_EXPORTER_OTLP_ENDPOINT"] {
		t.Fatalf("LOG_FORMAT %v, OTLP endpoint %v", kre["KRETRIEVE_LOG_FORMAT"], otel["OTEL_EXPORTER_OTLP_ENDPOINT"])
	}
	if got := commandsCell("all but broker", cmds); !reflect.DeepEqual(got, []string{"retrieval", "run"}) {
		t.Fatalf("all but broker: %v", got)
	}
	if got := commandsCell("dlq replay, lag", cmds); !reflect.DeepEqual(got, []string{"dlq", "lag"}) {
		t.Fatalf("list: %v", got)
	}
	if EnvName("topic-requests") != "KRETRIEVE_TOPIC_REQUESTS" {
		t.Fatal(EnvName("topic-requests"))
	}
}
