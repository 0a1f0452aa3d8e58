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
- measures its checkpoints (edge and from-origin latencies, records by
  origin time) and publishes them every --pathways-interval to the
  compacted topic --pathways-topic as kretrieve's processes do, and a last
  window when stopped (kretrieve_pathways.py), so that `kretrieve
  pathways` shows its edges in the pathway tree and completeness counts
  its hop;
- honours kretrieve-deadline: a record taken after its deadline is
  skipped (nobody waits for it) and ends its pathway at an expired
  checkpoint, and the header passes on;
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
from kafka.errors import KafkaError  # noqa: E402

import kretrieve_pathways as kp  # noqa: E402
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
        cp = lambda topic, direction: (args.service, args.group, topic, direction)  # noqa: E731
        self.cp_in, self.cp_out = cp(args.input, ks.PATHWAY_IN), cp(args.output, ks.PATHWAY_OUT)
        self.cp_expired, self.cp_dlq = cp(args.input, ks.PATHWAY_EXPIRED), cp(args.input + ".dlq", ks.PATHWAY_OUT)
        self.cp_ids = {c: ks.checkpoint_id(*c) for c in (self.cp_in, self.cp_out, self.cp_expired, self.cp_dlq)}
        interval = args.pathways_interval
        self.pathways = kp.Pathways(args.service, interval, time.time_ns()) if interval else None
        self.next_publish = time.time_ns() + interval
        self.pathways_failing = None  # the last publish's error, None after a success
        self.pathways_topic_found = False
        self.running = True

    def checkpoint(self, cp, parent, now_ns, exemplar=None, edge_ns=0):
        """Takes checkpoint cp (service, group, topic, direction) of a record whose pathway
        context is parent (None: the record starts a pathway here, edge_ns its queue wait):
        returns the continued context and the series that measured it (None when pathways
        are not published). The edge latency runs from parent's previous checkpoint."""
        nxt = ks.Pathway.next(parent, self.cp_ids[cp], now_ns)
        if self.pathways is None:
            return nxt, None
        edge, origin = (now_ns - parent.prev, now_ns - parent.origin) if parent else (edge_ns, 0)
        series = self.pathways.series_of(*cp, nxt.hash, parent.hash if parent else 0)
        series.record(edge, origin, exemplar, now_ns)
        return nxt, series

    def publish(self, final=False):
        """Publishes the pathway window due (or the last one, when final) to --pathways-topic,
        keyed by the instance id; a window not published is part of the next one."""
        now = time.time_ns()
        if self.pathways is None or (not final and now < self.next_publish):
            return
        self.next_publish = now + self.pathways.interval
        value, end = self.pathways.window(now, final)
        try:
            self.pathways_topic_found = self.pathways_topic_found or self.args.pathways_topic in self.consumer.topics()
            if not self.pathways_topic_found:  # never auto-created by a send
                raise KafkaError("topic %s does not exist (kretrieve's processes create it)" % self.args.pathways_topic)
            self.producer.send(self.args.pathways_topic, key=self.pathways.instance.encode(), value=value,
                               timestamp_ms=end // 10**6).get(timeout=5)
        except KafkaError as e:
            if str(e) != self.pathways_failing:
                print("pathway window not published: %s" % e, file=sys.stderr, flush=True)
            self.pathways_failing = str(e)
            return
        self.pathways.published(end)
        self.pathways_failing = None

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
        parent = ks.parse_traceparent((get("traceparent") or b"").decode("ascii", "replace"))
        trace_id, parent_id, flags = parent or (ks.new_id(16), None, 1)
        sampled = bool(flags & 1)
        group = {"messaging.consumer.group.name": self.args.group}
        links = [(trace_id, parent_id)] if parent_id else []
        wait = ks.Span("wait " + rec.topic, ks.KIND_INTERNAL, trace_id, parent_id, start_ns=min(rec.timestamp * 10**6, now_ns))
        wait.finish()
        proc = ks.Span("process " + rec.topic, ks.KIND_CONSUMER, trace_id, parent_id, links=links)
        exemplar = (trace_id, proc.span_id) if sampled else None
        pw, series = self.checkpoint(self.cp_in, ks.Pathway.decode(get(ks.PATHWAY_HEADER), now_ns), now_ns, exemplar, now_ns - wait.start)
        if series:
            series.count(pw.origin)
        if ks.expired(get(ks.DEADLINE_HEADER), now_ns // 10**6):
            print("skipped expired record %s/%d@%d" % (rec.topic, rec.partition, rec.offset), file=sys.stderr, flush=True)
            _, series = self.checkpoint(self.cp_expired, pw, time.time_ns(), exemplar)
            if series:
                series.count(pw.origin)  # a terminal checkpoint: the request ended
            return None
        for s in (wait, proc):
            s.attrs.update(self.messaging("process", rec.topic, rec.partition, rec.offset, rec.value, rec.key))
            s.attrs.update(group)
        wait.attrs.update({"kretrieve.queue_wait.ms": (now_ns - wait.start) / 1e6, "kretrieve.queue_wait.offset_lag": 0,
                           "kretrieve.queue_wait.timestamp_type": "CreateTime" if rec.timestamp_type == 0 else "LogAppendTime"})
        del wait.attrs["messaging.operation.type"], wait.attrs["messaging.operation.name"]
        try:
            cands = json.loads(rec.value)
            work = ks.Span("rescore candidates", ks.KIND_INTERNAL, trace_id, proc.span_id)
            cands["candidates"] = rescore(cands["candidates"], cands["query"])
            work.finish()
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            proc.finish()
            spans.extend([wait, proc] if sampled else [])
            return self.dead_letter(rec, headers, pw, e, exemplar)
        cands.setdefault("timings", {}).setdefault("stages", []).append(
            {"stage": self.args.stage, "queue_ms": wait.attrs["kretrieve.queue_wait.ms"], "work_ms": (work.end - work.start) / 1e6})
        send = ks.Span("send " + self.args.output, ks.KIND_PRODUCER, trace_id, proc.span_id)
        out_pw, out_series = self.checkpoint(self.cp_out, pw, time.time_ns(), (trace_id, send.span_id) if sampled else None)
        out_headers = [(k, v) for k, v in headers if k not in REWRITTEN]
        out_headers += [("traceparent", ks.traceparent(trace_id, send.span_id, flags).encode()),
                        (ks.PATHWAY_HEADER, out_pw.encode())]
        value = json.dumps(cands).encode()
        future = self.producer.send(self.args.output, key=rec.key, value=value, headers=out_headers)
        if sampled:
            spans.extend([wait, work])  # proc and send once the output is written
        return (future, send, proc, value, rec.key, sampled, out_series, out_pw.origin)

    def dead_letter(self, rec, headers, pw, err, exemplar):
        """Writes rec to its dead-letter topic, its pathway ended there (an out checkpoint):
        returns the pending send."""
        print("dead-lettered %s/%d@%d: %s" % (rec.topic, rec.partition, rec.offset, err), file=sys.stderr, flush=True)
        dlq = [(k, v) for k, v in headers if not k.startswith("kretrieve.dlq.")] + [
            ("kretrieve.dlq.reason", str(err)[:512].encode()), ("kretrieve.dlq.error_type", type(err).__name__.encode()),
            ("kretrieve.dlq.original_topic", rec.topic.encode()), ("kretrieve.dlq.original_partition", str(rec.partition).encode()),
            ("kretrieve.dlq.original_offset", str(rec.offset).encode()),
            ("kretrieve.dlq.original_timestamp", str(rec.timestamp).encode()),
            ("kretrieve.dlq.attempts", b"1"), ("kretrieve.dlq.consumer_group", self.args.group.encode())]
        dlq_pw, series = self.checkpoint(self.cp_dlq, pw, time.time_ns(), exemplar)
        dlq = [(k, v) for k, v in dlq if k != ks.PATHWAY_HEADER] + [(ks.PATHWAY_HEADER, dlq_pw.encode())]
        future = self.producer.send(rec.topic + ".dlq", key=rec.key, value=rec.value, headers=dlq)
        return (future, None, None, rec.value, rec.key, False, series, dlq_pw.origin)

    def run(self):
        """Polls, processes and publishes until stopped; commits a batch once its outputs are written."""
        while self.running:
            self.publish()
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
            for future, send, proc, value, key, sampled, series, origin in pending:
                md = future.get(timeout=10)
                if series:
                    series.count(origin)  # written: the record passed the out checkpoint
                if send is None:  # a dead letter
                    continue
                send.attrs.update(self.messaging("send", md.topic, md.partition, md.offset, value, key))
                send.finish()
                proc.finish()
                if sampled:
                    spans.extend([proc, send])
            self.consumer.commit()
            self.exporter.export(spans)
        self.publish(final=True)
        self.consumer.close()
        self.producer.close()


def interval(value):
    """--pathways-interval in nanoseconds: 0 or 10ms to 1h."""
    try:
        ns = kp.parse_duration(value)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))
    if ns and not kp.MIN_INTERVAL_NS <= ns <= kp.MAX_INTERVAL_NS:
        raise argparse.ArgumentTypeError("%s not within 10ms and 1h (0: never)" % value)
    return ns


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
    ap.add_argument("--pathways-topic", default=env("KRETRIEVE_PATHWAYS_TOPIC", kp.DEFAULT_TOPIC),
                    help="compacted topic of the pathway windows (kretrieve's processes create it)")
    ap.add_argument("--pathways-interval", default=env("KRETRIEVE_PATHWAYS_INTERVAL", "10s"), type=interval,
                    help="how often to publish a pathway window (a Go duration, 10ms to 1h; 0: never)")
    stage = Stage(ap.parse_args())

    def stop(*_):
        stage.running = False

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("rescore: reading %s as group %s, writing %s" % (stage.args.input, stage.args.group, stage.args.output), flush=True)
    stage.run()


if __name__ == "__main__":
    main()
