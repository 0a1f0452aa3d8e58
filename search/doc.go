// Package search is kretrieve's document index: it scores documents against a
// query with BM25 and serves documents by id for enrichment.
//
// This version keeps a small in-memory index (a brute-force BM25 over a
// corpus held in memory) and ships a demo corpus of the Go standard library's
// package synopses, so the pipeline does real work with no download. It sits
// behind the small interfaces of consumers/retrieval and
// consumers/enrichment, which is where a persistent index plugs in.
package search
