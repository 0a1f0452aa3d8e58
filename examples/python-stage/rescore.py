#!/usr/bin/env python3
"""rescore: a kretrieve stage written in Python with kafka-python.

It reads candidates (retrieval's output) in its own consumer group, boosts
each candidate whose document id contains a word of the query, re-sorts
them, adds its timings entry and publishes them to its output topic, which
enrichment reads when the stage is in the pipeline's stage table:

    kretrieve run --external-stage rescore:retrieval.rescored@retrieval ...
    python3 examples/python-stage/rescore.py --brokers 127.0.0.1:9092

For each record it
- continues the W3C trace: a "wait", a "process" and a "rescore
  candidates" span under the record's traceparent, and a "send" span whose
  id the output's traceparent carries (tracestate and baggage pass on);
  the spans go to OTLP/HTTP (JSON) when OTEL_EXPORTER_OTLP_ENDPOINT is set;
- continues the pathway: its in and out checkpoints are chained into the
  kretrieve-pathway header as kretrieve's own are, so the next stage
  measures its edge from this stage and the pathway hash names this stage;
- honours kretrieve-deadline: a record taken after its deadline is
  skipped (nobody waits for it), and the header passes on;
- passes every other header on (kretrieve-correlation above all, which the
  result collector matches outcomes by);
- dead-letters a record it cannot decode to <input>.dlq, with the
  kretrieve.dlq.* headers.
"""

import argparse
import json
import os
import signal
import sys
import time

sys.modules.setdefault("snappy", None)  # kretrieve produces uncompressed batches by default
from kafka import KafkaConsumer, KafkaProducer  # noqa: E402

import kretrieve_stage as ks  # noqa: E402

# Headers this stage rewrites; the rest pass on unchanged.
REWRITTEN = {"traceparent", ks.PATHWAY_HEADER}


def rescore(candidates, query):
    """Boosts candidates whose document id holds a query word (case-insensitive), best first."""
    words = {w for w in query.lower().split() if len(w) > 2}
    for c in candidates:
        parts = set(c["doc_id"].lower().replace("/", " ").replace(".", " ").split())
        c["score"] = c["score"] * (1 + 0.5 * len(words & parts))
    candidates.sort(key=lambda c: -c["score"])
    return candidates


class Stage:
    """One worker of the stage: a consumer in the group, a producer, the span exporter."""

    def __init__(self, args):
        self.args = args
        self.exporter = ks.Exporter(args.service)
        common = dict(bootstrap_servers=args.brokers.split(","), client_id=args.client_id, api_version=(2, 5, 0))
        self.consumer = KafkaConsumer(args.input, group_id=args.group, enable_auto_commit=False,
                                      auto_offset_reset="earliest", **common)
        self.producer = KafkaProducer(acks="all", linger_ms=0, **common)
        host, _, port = args.brokers.split(",")[0].rpartition(":")
        self.server = {"server.address": host, "server.port": int(port)}
        self.cp_in = ks.checkpoint_id(args.service, args.group, args.input, ks.PATHWAY_IN)
        self.cp_out = ks.checkpoint_id(args.service, args.group, args.output, ks.PATHWAY_OUT)
        self.running = True

    def messaging(self, op, topic, partition, offset, value, key):
        a = {"messaging.system": "kafka", "messaging.operation.type": op, "messaging.operation.name": op,
             "messaging.destination.name": topic, "messaging.destination.partition.id": str(partition),
             "messaging.kafka.offset": offset, "messaging.client.id": self.args.client_id,
             "messaging.message.body.size": len(value)}
        if key is not None:
            a["kretrieve.message.key_hash"] = "%x" % ks.xxh64(key)
        a.update(self.server)
        return a

    def handle(self, rec, spans):
        """Processes one record: returns the pending send of its output, or None."""
        now_ns = time.time_ns()
        headers = [(k, v) for k, v in (rec.headers or [])]
        get = lambda key: next((v for k, v in headers if k == key), None)  # noqa: E731
        if ks.expired(get(ks.DEADLINE_HEADER), now_ns // 10**6):
            print("skipped expired record %s/%d@%d" % (rec.topic, rec.partition, rec.offset), file=sys.stderr, flush=True)
            return None
        parent = ks.parse_traceparent((get("traceparent") or b"").decode("ascii", "replace"))
        trace_id, parent_id, flags = parent or (ks.new_id(16), None, 1)
        sampled = bool(flags & 1)
        group = {"messaging.consumer.group.name": self.args.group}
        links = [(trace_id, parent_id)] if parent_id else []
        wait = ks.Span("wait " + rec.topic, ks.KIND_INTERNAL, trace_id, parent_id, start_ns=min(rec.timestamp * 10**6, now_ns))
        wait.finish()
        proc = ks.Span("process " + rec.topic, ks.KIND_CONSUMER, trace_id, parent_id, links=links)
        for s in (wait, proc):
            s.attrs.update(self.messaging("process", rec.topic, rec.partition, rec.offset, rec.value, rec.key))
            s.attrs.update(group)
        wait.attrs.update({"kretrieve.queue_wait.ms": (now_ns - wait.start) / 1e6, "kretrieve.queue_wait.offset_lag": 0,
                           "kretrieve.queue_wait.timestamp_type": "CreateTime" if rec.timestamp_type == 0 else "LogAppendTime"})
        del wait.attrs["messaging.operation.type"], wait.attrs["messaging.operation.name"]
        pw = ks.Pathway.next(ks.Pathway.decode(get(ks.PATHWAY_HEADER), now_ns), self.cp_in, now_ns)
        try:
            cands = json.loads(rec.value)
            work = ks.Span("rescore candidates", ks.KIND_INTERNAL, trace_id, proc.span_id)
            cands["candidates"] = rescore(cands["candidates"], cands["query"])
            work.finish()
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            proc.finish()
            spans.extend([wait, proc] if sampled else [])
            return self.dead_letter(rec, headers, e)
        cands.setdefault("timings", {}).setdefault("stages", []).append(
            {"stage": self.args.stage, "queue_ms": wait.attrs["kretrieve.queue_wait.ms"], "work_ms": (work.end - work.start) / 1e6})
        send = ks.Span("send " + self.args.output, ks.KIND_PRODUCER, trace_id, proc.span_id)
        out_pw = ks.Pathway.next(pw, self.cp_out, time.time_ns())
        out_headers = [(k, v) for k, v in headers if k not in REWRITTEN]
        out_headers += [("traceparent", ks.traceparent(trace_id, send.span_id, flags).encode()),
                        (ks.PATHWAY_HEADER, out_pw.encode())]
        value = json.dumps(cands).encode()
        future = self.producer.send(self.args.output, key=rec.key, value=value, headers=out_headers)
        if sampled:
            spans.extend([wait, work])  # proc and send once the output is written
        return (future, send, proc, value, rec.key, sampled)

    def dead_letter(self, rec, headers, err):
        print("dead-lettered %s/%d@%d: %s" % (rec.topic, rec.partition, rec.offset, err), file=sys.stderr, flush=True)
        dlq = [(k, v) for k, v in headers if not k.startswith("kretrieve.dlq.")] + [
            ("kretrieve.dlq.reason", str(err)[:512].encode()), ("kretrieve.dlq.error_type", type(err).__name__.encode()),
            ("kretrieve.dlq.original_topic", rec.topic.encode()), ("kretrieve.dlq.original_partition", str(rec.partition).encode()),
            ("kretrieve.dlq.original_offset", str(rec.offset).encode()),
            ("kretrieve.dlq.original_timestamp", str(rec.timestamp).encode()),
            ("kretrieve.dlq.attempts", b"1"), ("kretrieve.dlq.consumer_group", self.args.group.encode())]
        self.producer.send(rec.topic + ".dlq", key=rec.key, value=rec.value, headers=dlq)
        return None

    def run(self):
        """Polls, processes and publishes until stopped; commits a batch once its outputs are written."""
        while self.running:
            batches = self.consumer.poll(timeout_ms=200)
            spans, pending = [], []
            for records in batches.values():
                for rec in records:
                    p = self.handle(rec, spans)
                    if p:
                        pending.append(p)
            if not batches:
                continue
            self.producer.flush()
            for future, send, proc, value, key, sampled in pending:
                md = future.get(timeout=10)
                send.attrs.update(self.messaging("send", md.topic, md.partition, md.offset, value, key))
                send.finish()
                proc.finish()
                if sampled:
                    spans.extend([proc, send])
            self.consumer.commit()
            self.exporter.export(spans)
        self.consumer.close()
        self.producer.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    env = os.environ.get
    ap.add_argument("--brokers", default=env("KRETRIEVE_BROKERS", "127.0.0.1:9092"))
    ap.add_argument("--input", default="retrieval.candidates", help="topic read (the stage before's output)")
    ap.add_argument("--output", default="retrieval.rescored", help="topic written (the stage after's input)")
    ap.add_argument("--group", default="rescore", help="consumer group (the stage table's group)")
    ap.add_argument("--stage", default="rescore", help="stage name in the results' timings")
    ap.add_argument("--client-id", default="kretrieve-rescore")
    ap.add_argument("--service", default=env("OTEL_SERVICE_NAME", "kretrieve-rescore"),
                    help="service.name of spans and pathway checkpoints")
    stage = Stage(ap.parse_args())

    def stop(*_):
        stage.running = False

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("rescore: reading %s as group %s, writing %s" % (stage.args.input, stage.args.group, stage.args.output), flush=True)
    stage.run()


if __name__ == "__main__":
    main()
